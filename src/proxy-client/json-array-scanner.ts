/**
 * The array form of a success body, `[{...}, {...}]`, scanned byte by byte: each object is handed out as
 * soon as its closing brace arrives, whatever the chunk boundaries, and only the unfinished object is kept.
 */
import type { ItemBuffer } from './item-buffer';
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  ResponseFormatError,
  checkItem,
  describeByte,
  excerpt,
  isBlank,
  type ParseEvent,
} from './response-format';

type ArrayState = 'value-or-end' | 'value' | 'in-item' | 'after-item' | 'done';

export class JsonArrayScanner {
  private arrayState: ArrayState = 'value-or-end';
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Complete items so far. */
  arrayIndex = 0;

  constructor(private readonly buffer: ItemBuffer) {}

  /** Call once the body has ended: an array without its closing bracket is truncated. */
  end(): void {
    if (this.arrayState !== 'done') {
      throw new ResponseFormatError(
        'truncated',
        `the JSON array ended without its closing bracket after ${this.arrayIndex} complete item(s)`,
      );
    }
  }

  push(chunk: Buffer, from: number, out: ParseEvent[]): void {
    let i = from;
    const n = chunk.length;
    while (i < n) {
      switch (this.arrayState) {
        case 'value-or-end':
        case 'value': {
          const b = chunk[i] as number;
          i++;
          if (isBlank(b)) continue;
          if (b === OPEN_BRACE) {
            this.arrayState = 'in-item';
            this.depth = 1;
            this.inString = false;
            this.escaped = false;
            this.itemStart = i - 1;
            continue;
          }
          if (b === CLOSE_BRACKET && this.arrayState === 'value-or-end') {
            this.arrayState = 'done';
            continue;
          }
          if (b === CLOSE_BRACKET)
            throw new ResponseFormatError(
              'invalid',
              `the JSON array has a trailing comma after item ${this.arrayIndex}`,
            );
          throw new ResponseFormatError(
            'invalid',
            `item ${this.arrayIndex + 1} of the JSON array starts with ${describeByte(b)}, not a JSON object`,
          );
        }
        case 'in-item': {
          i = this.scanItem(chunk, i, out);
          continue;
        }
        case 'after-item': {
          const b = chunk[i] as number;
          i++;
          if (isBlank(b)) continue;
          if (b === COMMA) this.arrayState = 'value';
          else if (b === CLOSE_BRACKET) this.arrayState = 'done';
          else
            throw new ResponseFormatError(
              'invalid',
              `expected "," or "]" after item ${this.arrayIndex} of the JSON array, got ${describeByte(b)}`,
            );
          continue;
        }
        case 'done': {
          const b = chunk[i] as number;
          i++;
          if (!isBlank(b))
            throw new ResponseFormatError('invalid', `unexpected ${describeByte(b)} after the end of the JSON array`);
          continue;
        }
      }
    }
    if (this.arrayState === 'in-item') {
      this.buffer.add(chunk.subarray(this.itemStart), () => `item ${this.arrayIndex + 1}`);
    }
    this.itemStart = 0;
  }

  /** Offset in the current chunk where the item being scanned begins (0 when it began in an earlier chunk). */
  private itemStart = 0;

  /** Scans inside an object; returns the index after the item's closing brace, or chunk.length. */
  private scanItem(chunk: Buffer, from: number, out: ParseEvent[]): number {
    let depth = this.depth;
    let inString = this.inString;
    let escaped = this.escaped;
    const n = chunk.length;
    let i = from;
    let q = -2; // next quote at or after i; -1: none in this chunk; -2: not searched yet
    for (; i < n; i++) {
      if (inString) {
        if (escaped) {
          escaped = false;
          continue;
        }
        // Jump to the closing quote with native search instead of a byte loop (long string
        // values dominate account data); a backslash before it is handled one escape at a time.
        // Cached while still ahead, so a string full of escapes stays linear, not quadratic.
        if (q !== -1 && q < i) q = chunk.indexOf(QUOTE, i);
        const end = q === -1 ? n : q;
        const bs = chunk.subarray(i, end).indexOf(BACKSLASH);
        if (bs !== -1) {
          i += bs;
          escaped = true;
        } else if (q === -1) {
          i = n - 1;
        } else {
          i = q;
          inString = false;
        }
        continue;
      }
      const b = chunk[i] as number;
      if (b === QUOTE) inString = true;
      else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
      else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) {
          this.buffer.add(chunk.subarray(this.itemStart, i + 1), () => `item ${this.arrayIndex + 1}`);
          this.itemStart = 0;
          this.depth = 0;
          this.inString = false;
          this.escaped = false;
          this.arrayIndex += 1;
          const text = this.buffer.take();
          let value: unknown;
          try {
            value = JSON.parse(text.toString('utf8'));
          } catch {
            throw new ResponseFormatError(
              'invalid',
              `item ${this.arrayIndex} of the JSON array is not valid JSON${excerpt(text)}`,
            );
          }
          out.push({ kind: 'item', item: checkItem(value, `item ${this.arrayIndex} of the JSON array`) });
          this.arrayState = 'after-item';
          return i + 1;
        }
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    // The caller stores the unfinished tail; enforce the size bound as bytes accumulate.
    if (this.buffer.bytes + (n - this.itemStart) > this.buffer.maxItemBytes) {
      throw new ResponseFormatError(
        'invalid',
        `item ${this.arrayIndex + 1} is larger than ${this.buffer.maxItemBytes} bytes`,
      );
    }
    return n;
  }
}

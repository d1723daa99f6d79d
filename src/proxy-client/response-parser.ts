/**
 * Incremental parser for a proxy server's success body: a JSON array of objects, or NDJSON.
 *
 * It is fed raw bytes in whatever chunks the socket delivers and returns every item as soon as
 * its last byte has arrived, so memory is bounded by the largest single item, never by the
 * body. It scans bytes, not strings: the structural characters it looks for are ASCII and
 * never occur inside a multi-byte UTF-8 sequence, and an item is only decoded once complete,
 * so a character split across two chunks is never decoded in halves.
 */
import { parseStreamErrorLine, type StreamErrorLine } from '../errors/stream-error-line';

export type ParsedItem = Record<string, unknown>;

export type ParseEvent =
  { kind: 'item'; item: ParsedItem } | { kind: 'heartbeat' } | { kind: 'server-error'; error: StreamErrorLine };

/** `invalid`: not a JSON array or NDJSON of objects. `truncated`: the body stopped too early. */
export class ResponseFormatError extends Error {
  readonly kind: 'invalid' | 'truncated';
  constructor(kind: 'invalid' | 'truncated', message: string) {
    super(message);
    this.name = 'ResponseFormatError';
    this.kind = kind;
  }
}

export interface ResponseParserOptions {
  /** The response's Content-Type header; NDJSON media types make a single-object body valid. */
  contentType?: string;
  /** Largest accepted item (or NDJSON line) in bytes. */
  maxItemBytes?: number;
}

const DEFAULT_MAX_ITEM_BYTES = 16 * 1024 * 1024;

const NDJSON_TYPES = new Set([
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/x-jsonlines',
  'application/jsonlines',
]);

const LF = 0x0a;
const HASH = 0x23;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isBlank(b: number): boolean {
  return b === SPACE || b === LF || b === CR || b === TAB;
}

function isNdjsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const media = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return NDJSON_TYPES.has(media);
}

/** Rejects the shapes the spec calls invalid even though they are valid JSON. */
function checkItem(value: unknown, where: string): ParsedItem {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const shape = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw new ResponseFormatError('invalid', `${where} is ${shape}, not a JSON object`);
  }
  const data = (value as Record<string, unknown>).data;
  if (data !== null && typeof data === 'object') {
    throw new ResponseFormatError(
      'invalid',
      `${where} wraps its content in a "data" field; a proxy server must send raw objects, not {data: ...} envelopes`,
    );
  }
  return value as ParsedItem;
}

type Mode = 'detect' | 'array' | 'ndjson' | 'single-or-ndjson';
type ArrayState = 'value-or-end' | 'value' | 'in-item' | 'after-item' | 'done';

export class ResponseParser {
  private readonly ndjsonDeclared: boolean;
  private readonly maxItemBytes: number;
  private mode: Mode = 'detect';
  private sawBom = false;
  private started = false;

  // Bytes of the item or line being assembled (slices of the chunks they came in).
  private parts: Buffer[] = [];
  private partBytes = 0;

  // Array mode.
  private arrayState: ArrayState = 'value-or-end';
  private depth = 0;
  private inString = false;
  private escaped = false;
  private arrayIndex = 0;

  // NDJSON mode.
  private lineNumber = 0;
  private itemCount = 0;
  /** In `single-or-ndjson` mode: the first object, held until a second line shows the body is NDJSON. */
  private held: ParsedItem | undefined;

  constructor(opts: ResponseParserOptions = {}) {
    this.ndjsonDeclared = isNdjsonContentType(opts.contentType);
    this.maxItemBytes = opts.maxItemBytes ?? DEFAULT_MAX_ITEM_BYTES;
  }

  /**
   * Items completed by this chunk, in order. Invalid input found in the chunk is reported after
   * the items that precede it (so what a caller sees never depends on chunk boundaries): call
   * `assertOk()` after handling the returned events; the next `push()` or `end()` throws it too.
   */
  push(chunk: Buffer): ParseEvent[] {
    this.assertOk();
    const out: ParseEvent[] = [];
    try {
      this.pushInto(chunk, out);
    } catch (e) {
      if (!(e instanceof ResponseFormatError)) throw e;
      this.failure = e;
    }
    return out;
  }

  /** Throws the ResponseFormatError found by an earlier `push()`, if any. */
  assertOk(): void {
    if (this.failure) throw this.failure;
  }

  private failure: ResponseFormatError | undefined;

  private pushInto(chunk: Buffer, out: ParseEvent[]): void {
    let start = 0;
    if (
      !this.sawBom &&
      !this.started &&
      chunk.length >= 3 &&
      chunk[0] === 0xef &&
      chunk[1] === 0xbb &&
      chunk[2] === 0xbf
    ) {
      this.sawBom = true;
      start = 3;
    }
    if (this.mode === 'detect') {
      start = this.detect(chunk, start, out);
      if (this.mode === 'detect') return;
    }
    if (this.mode === 'array') this.pushArray(chunk, start, out);
    else this.pushLines(chunk, start, out);
  }

  /** Call once the body has ended; returns the last items or throws if the body is incomplete. */
  end(): ParseEvent[] {
    this.assertOk();
    const out: ParseEvent[] = [];
    switch (this.mode) {
      case 'detect':
        return out;
      case 'array':
        if (this.arrayState !== 'done') {
          throw new ResponseFormatError(
            'truncated',
            `the JSON array ended without its closing bracket after ${this.arrayIndex} complete item(s)`,
          );
        }
        return out;
      default: {
        if (this.partBytes > 0) {
          const line = this.takeParts();
          if (!isBlankBuffer(line)) {
            this.lineNumber += 1;
            let value: unknown;
            try {
              value = JSON.parse(line.toString('utf8'));
            } catch {
              throw new ResponseFormatError(
                'truncated',
                `the body ended in the middle of line ${this.lineNumber} (no newline and not a complete JSON object)`,
              );
            }
            this.acceptLine(checkItem(value, `line ${this.lineNumber}`), out);
          }
        }
        if (this.mode === 'single-or-ndjson' && this.held !== undefined && this.itemCount === 1) {
          throw new ResponseFormatError(
            'invalid',
            'the body is a single bare JSON object; expected a JSON array of objects or NDJSON (Content-Type application/x-ndjson)',
          );
        }
        return out;
      }
    }
  }

  private detect(chunk: Buffer, from: number, out: ParseEvent[]): number {
    let i = from;
    for (; i < chunk.length; i++) {
      const b = chunk[i] as number;
      if (b === LF) {
        out.push({ kind: 'heartbeat' });
        continue;
      }
      if (isBlank(b)) continue;
      this.started = true;
      if (b === OPEN_BRACKET) {
        this.mode = 'array';
        return i + 1;
      }
      if (b === OPEN_BRACE) {
        this.mode = this.ndjsonDeclared ? 'ndjson' : 'single-or-ndjson';
        return i;
      }
      // A stream that failed before its first item but after a heartbeat: its closing error line.
      if (b === HASH && this.ndjsonDeclared) {
        this.mode = 'ndjson';
        return i;
      }
      throw new ResponseFormatError(
        'invalid',
        `the body starts with ${describeByte(b)}; expected "[" (a JSON array) or "{" (NDJSON)`,
      );
    }
    this.started = this.started || i > from;
    return i;
  }

  private addPart(part: Buffer): void {
    if (part.length === 0) return;
    this.parts.push(part);
    this.partBytes += part.length;
    if (this.partBytes > this.maxItemBytes) {
      const what = this.mode === 'array' ? `item ${this.arrayIndex + 1}` : `line ${this.lineNumber + 1}`;
      throw new ResponseFormatError('invalid', `${what} is larger than ${this.maxItemBytes} bytes`);
    }
  }

  private takeParts(): Buffer {
    const buf = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts, this.partBytes);
    this.parts = [];
    this.partBytes = 0;
    return buf;
  }

  private pushLines(chunk: Buffer, from: number, out: ParseEvent[]): void {
    let start = from;
    while (start < chunk.length) {
      const nl = chunk.indexOf(LF, start);
      if (nl === -1) {
        this.addPart(chunk.subarray(start));
        return;
      }
      this.addPart(chunk.subarray(start, nl));
      start = nl + 1;
      const line = this.takeParts();
      this.lineNumber += 1;
      if (isBlankBuffer(line)) {
        out.push({ kind: 'heartbeat' });
        continue;
      }
      let value: unknown;
      try {
        value = JSON.parse(line.toString('utf8'));
      } catch {
        const serverError = line[0] === HASH ? parseStreamErrorLine(line.toString('utf8')) : undefined;
        if (serverError) {
          out.push({ kind: 'server-error', error: serverError });
          continue;
        }
        throw new ResponseFormatError('invalid', `line ${this.lineNumber} is not valid JSON${excerpt(line)}`);
      }
      this.acceptLine(checkItem(value, `line ${this.lineNumber}`), out);
    }
  }

  private acceptLine(item: ParsedItem, out: ParseEvent[]): void {
    this.itemCount += 1;
    if (this.mode !== 'single-or-ndjson') {
      out.push({ kind: 'item', item });
      return;
    }
    if (this.itemCount === 1) {
      this.held = item;
      return;
    }
    // A second object: the body is NDJSON after all; release the first one, in order.
    const first = this.held as ParsedItem;
    this.held = undefined;
    this.mode = 'ndjson';
    out.push({ kind: 'item', item: first }, { kind: 'item', item });
  }

  private pushArray(chunk: Buffer, from: number, out: ParseEvent[]): void {
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
      this.addPart(chunk.subarray(this.itemStart));
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
          this.addPart(chunk.subarray(this.itemStart, i + 1));
          this.itemStart = 0;
          this.depth = 0;
          this.inString = false;
          this.escaped = false;
          this.arrayIndex += 1;
          const text = this.takeParts();
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
    if (this.partBytes + (n - this.itemStart) > this.maxItemBytes) {
      throw new ResponseFormatError('invalid', `item ${this.arrayIndex + 1} is larger than ${this.maxItemBytes} bytes`);
    }
    return n;
  }
}

function isBlankBuffer(buf: Buffer): boolean {
  for (let i = 0; i < buf.length; i++) if (!isBlank(buf[i] as number)) return false;
  return true;
}

function describeByte(b: number): string {
  return b >= 0x20 && b < 0x7f ? `"${String.fromCharCode(b)}"` : `byte 0x${b.toString(16).padStart(2, '0')}`;
}

/** A short, single-line quote of bad input so an operator can recognise it (e.g. an HTML error page). */
function excerpt(buf: Buffer): string {
  const text = buf.subarray(0, 120).toString('utf8').replace(/\s+/g, ' ').trim();
  return text ? ` (starts with: ${JSON.stringify(text.slice(0, 60))})` : '';
}

/**
 * Incremental parser for a proxy server's success body: a JSON array of objects, or NDJSON.
 *
 * It is fed raw bytes in whatever chunks the socket delivers and returns every item as soon as
 * its last byte has arrived, so memory is bounded by the largest single item, never by the
 * body. It scans bytes, not strings: the structural characters it looks for are ASCII and
 * never occur inside a multi-byte UTF-8 sequence, and an item is only decoded once complete,
 * so a character split across two chunks is never decoded in halves.
 */
import { parseStreamErrorLine } from '../errors/stream-error-line';
import { ItemBuffer } from './item-buffer';
import { JsonArrayScanner } from './json-array-scanner';
import {
  HASH,
  LF,
  OPEN_BRACE,
  OPEN_BRACKET,
  ResponseFormatError,
  checkItem,
  describeByte,
  excerpt,
  isBlank,
  isBlankBuffer,
  type ParseEvent,
  type ParsedItem,
} from './response-format';

export { ResponseFormatError, type ParseEvent } from './response-format';
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

function isNdjsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const media = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return NDJSON_TYPES.has(media);
}

type Mode = 'detect' | 'array' | 'ndjson' | 'single-or-ndjson';

export class ResponseParser {
  private readonly ndjsonDeclared: boolean;
  private mode: Mode = 'detect';
  private sawBom = false;
  private started = false;

  /** The item or line being assembled. */
  private readonly buffer: ItemBuffer;
  /** Array mode. */
  private readonly array: JsonArrayScanner;

  // NDJSON mode.
  private lineNumber = 0;
  private itemCount = 0;
  /** In `single-or-ndjson` mode: the first object, held until a second line shows the body is NDJSON. */
  private held: ParsedItem | undefined;

  constructor(opts: ResponseParserOptions = {}) {
    this.ndjsonDeclared = isNdjsonContentType(opts.contentType);
    this.buffer = new ItemBuffer(opts.maxItemBytes ?? DEFAULT_MAX_ITEM_BYTES);
    this.array = new JsonArrayScanner(this.buffer);
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
    if (this.mode === 'array') this.array.push(chunk, start, out);
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
        this.array.end();
        return out;
      default: {
        if (this.buffer.bytes > 0) {
          const line = this.buffer.take();
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

  private readonly lineLabel = (): string => `line ${this.lineNumber + 1}`;

  private pushLines(chunk: Buffer, from: number, out: ParseEvent[]): void {
    let start = from;
    while (start < chunk.length) {
      const nl = chunk.indexOf(LF, start);
      if (nl === -1) {
        this.buffer.add(chunk.subarray(start), this.lineLabel);
        return;
      }
      this.buffer.add(chunk.subarray(start, nl), this.lineLabel);
      start = nl + 1;
      const line = this.buffer.take();
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
}

/**
 * What a proxy server's success body may look like, byte by byte: the structural bytes the parsers scan
 * for, the item shape the spec accepts, and the error that says why a body is not acceptable.
 */
import type { StreamErrorLine } from '../errors/stream-error-line';

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

export const LF = 0x0a;
export const HASH = 0x23;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

export function isBlank(b: number): boolean {
  return b === SPACE || b === LF || b === CR || b === TAB;
}

export function isBlankBuffer(buf: Buffer): boolean {
  for (let i = 0; i < buf.length; i++) if (!isBlank(buf[i] as number)) return false;
  return true;
}

export function describeByte(b: number): string {
  return b >= 0x20 && b < 0x7f ? `"${String.fromCharCode(b)}"` : `byte 0x${b.toString(16).padStart(2, '0')}`;
}

/** A short, single-line quote of bad input so an operator can recognise it (e.g. an HTML error page). */
export function excerpt(buf: Buffer): string {
  const text = buf.subarray(0, 120).toString('utf8').replace(/\s+/g, ' ').trim();
  return text ? ` (starts with: ${JSON.stringify(text.slice(0, 60))})` : '';
}

/** Rejects the shapes the spec calls invalid even though they are valid JSON. */
export function checkItem(value: unknown, where: string): ParsedItem {
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

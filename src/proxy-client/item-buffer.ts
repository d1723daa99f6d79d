import { ResponseFormatError } from './response-format';

/**
 * The bytes of the item or line being assembled, as slices of the chunks they came in (no copy until the
 * item is complete), bounded by the largest accepted item.
 */
export class ItemBuffer {
  private parts: Buffer[] = [];
  bytes = 0;

  constructor(readonly maxItemBytes: number) {}

  /** `what`: the item or line, for the message when it grows past the bound. */
  add(part: Buffer, what: () => string): void {
    if (part.length === 0) return;
    this.parts.push(part);
    this.bytes += part.length;
    if (this.bytes > this.maxItemBytes) {
      throw new ResponseFormatError('invalid', `${what()} is larger than ${this.maxItemBytes} bytes`);
    }
  }

  take(): Buffer {
    const buf = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts, this.bytes);
    this.parts = [];
    this.bytes = 0;
    return buf;
  }
}

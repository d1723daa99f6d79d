/**
 * Groups NDJSON lines into chunks: a chunk is emitted when it reaches `maxBytes`, or
 * `lingerMs` after its first line (0 = on the next turn of the event loop), so a fast
 * producer gets large chunks and a slow one gets its items promptly.
 */
export class LineBatcher {
  private parts: string[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly opts: { maxBytes: number; lingerMs: number },
    private readonly emit: (data: string, items: number) => void,
  ) {}

  /** Adds one line (without its newline); true when a chunk was emitted. */
  add(line: string): boolean {
    this.parts.push(line);
    // Length in UTF-16 units is a close enough proxy for bytes when sizing chunks.
    this.bytes += line.length + 1;
    if (this.bytes >= this.opts.maxBytes) {
      this.flush();
      return true;
    }
    if (!this.timer) this.timer = setTimeout(() => this.flush(), this.opts.lingerMs);
    return false;
  }

  get pendingItems(): number {
    return this.parts.length;
  }

  flush(): void {
    const chunk = this.take();
    if (chunk) this.emit(chunk.data, chunk.items);
  }

  /** Removes and returns the pending lines as a chunk without emitting it. */
  take(): { data: string; items: number } | undefined {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.parts.length === 0) return undefined;
    const items = this.parts.length;
    const data = this.parts.join('\n') + '\n';
    this.parts = [];
    this.bytes = 0;
    return { data, items };
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.parts = [];
    this.bytes = 0;
  }
}

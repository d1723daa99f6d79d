import type { Logger } from '../ports/logger';

/**
 * Info lines a run writes per account of one kind, at most. A run of a large tenant would otherwise
 * write one per potential duplicate and one per form (294,639 each in bench:scale-out's 300k tenant),
 * and with external logging at info, send each as a POST. Those after the first ones go to debug; the
 * run's closing lines ("Aggregation finished", the review summary) count them all.
 */
export const PER_ACCOUNT_INFO_LINES = 100;

/** One run's lines of one kind: the first PER_ACCOUNT_INFO_LINES at info, one line saying so, the rest at debug. */
export class PerAccountLines {
  private written = 0;

  constructor(
    private readonly logger: Logger,
    /** What the lines are about, plural ("potential duplicates"): named in the line that says the rest go to debug. */
    private readonly kind: string,
  ) {}

  info(fields: Record<string, unknown>, msg: string): void {
    if (this.written < PER_ACCOUNT_INFO_LINES) {
      this.written++;
      this.logger.info(fields, msg);
      return;
    }
    if (this.written === PER_ACCOUNT_INFO_LINES) {
      this.written++;
      this.logger.info(
        { kind: this.kind, infoLines: PER_ACCOUNT_INFO_LINES },
        `More ${this.kind} in this run are logged at debug level only (the first ${PER_ACCOUNT_INFO_LINES} are above); the run's closing lines count them all`,
      );
    }
    this.logger.debug(fields, msg);
  }
}

/** A destination for log records besides the process log, e.g. the "External logging URL". */
export interface LogRecord {
  level: 'error' | 'warn' | 'info' | 'debug';
  time: string;
  msg: string;
  [field: string]: unknown;
}

export interface LogSink {
  /** Never blocks and never throws: a sink that cannot keep up drops records and counts them. */
  write(record: LogRecord): void;
  /** Sends what is buffered, waiting at most a short deadline. */
  close(): Promise<void>;
}

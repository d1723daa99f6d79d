// Log sinks as the core sees them; defined in observability (see ./logger.ts).
export type { LogRecord, LogSink } from '../../observability/log-sink-port';

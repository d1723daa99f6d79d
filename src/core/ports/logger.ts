// The logging surface as the core sees it. Defined in observability, which owns logging and imports
// nothing from core (the one direction between them: core -> observability).
export { type LogFn, type Logger, silentLogger } from '../../observability/logger-port';

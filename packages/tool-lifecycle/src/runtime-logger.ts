/** Structured fields attached to a log entry. */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * The only way the runtime and its adapters report anything: inject your own
 * (pino, winston, OpenTelemetry logs) under `RUNTIME_LOGGER`. Library code
 * never writes to stdout.
 */
export interface RuntimeLogger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** Level below which {@link createConsoleLogger} stays silent. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, silent: 4 };

/**
 * The default logger: writes to `console.error` (stderr, never stdout), from
 * `level` up (default `warn`), as `[ca] message {json fields}`.
 */
export function createConsoleLogger(level: LogLevel = 'warn'): RuntimeLogger {
  const threshold = order[level] ?? order.warn;
  const write = (entryLevel: LogLevel, message: string, fields?: LogFields): void => {
    if (order[entryLevel] < threshold) return;
    let suffix = '';
    if (fields !== undefined) {
      try {
        suffix = ` ${JSON.stringify(fields, (_key, value: unknown) => (value instanceof Error ? { name: value.name, message: value.message } : value))}`;
      } catch {
        suffix = ' [unserialisable fields]';
      }
    }
    console.error(`[ca] ${entryLevel}: ${message}${suffix}`);
  };
  return {
    debug: (message, fields) => write('debug', message, fields),
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
  };
}

/** A logger that discards everything. */
export const silentLogger: RuntimeLogger = Object.freeze({
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
});

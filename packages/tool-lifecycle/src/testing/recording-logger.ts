import type { LogFields, RuntimeLogger } from '../observability';

/** One entry a {@link RecordingLogger} received. */
export interface LogEntry {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields?: LogFields;
}

/** A {@link RuntimeLogger} that keeps every entry in memory, for assertions. */
export class RecordingLogger implements RuntimeLogger {
  readonly entries: LogEntry[] = [];
  debug(message: string, fields?: LogFields): void {
    this.entries.push({ level: 'debug', message, ...(fields === undefined ? {} : { fields }) });
  }
  info(message: string, fields?: LogFields): void {
    this.entries.push({ level: 'info', message, ...(fields === undefined ? {} : { fields }) });
  }
  warn(message: string, fields?: LogFields): void {
    this.entries.push({ level: 'warn', message, ...(fields === undefined ? {} : { fields }) });
  }
  error(message: string, fields?: LogFields): void {
    this.entries.push({ level: 'error', message, ...(fields === undefined ? {} : { fields }) });
  }
  /** Entries of one level. */
  at(level: LogEntry['level']): LogEntry[] {
    return this.entries.filter((entry) => entry.level === level);
  }
}

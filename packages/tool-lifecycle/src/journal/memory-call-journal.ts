import { hostname } from 'node:os';
import type { CallJournal, InterruptedCall, JournalCall, JournalEntry, JournalOutcome, JournalReply } from './call-journal';

/** One call as a {@link MemoryCallJournal} keeps it. */
export interface JournalRecord {
  readonly entry: JournalEntry;
  /** Where the call was begun (`host pid 123`). */
  readonly host?: string;
  /** When, ISO-8601. */
  readonly begunAt?: string;
  /** How it ended; absent while it runs, or when its process stopped during the call. */
  readonly outcome?: JournalOutcome;
}

/** Options of {@link MemoryCallJournal}. */
export interface MemoryCallJournalOptions {
  /** Records to start from (what `records()` gave another journal — a process that stopped). */
  readonly records?: readonly JournalRecord[];
  /** How this process is named in the records (default `<hostname> pid <pid>`). */
  readonly host?: string;
  /** Most records kept; beyond, the oldest ended one is forgotten (default 10,000). */
  readonly maxRecords?: number;
}

/** How many records a memory journal keeps by default. */
export const MEMORY_JOURNAL_MAX_RECORDS = 10_000;

/**
 * A {@link CallJournal} in this process's memory. The runtime makes one per
 * plan when the plan has no journal of its own (its records then last as long
 * as the plan's context); give one to several plans or runtimes to share it.
 * `records()` and `options.records` carry its records to another journal: a
 * test, or a service that keeps them in a file of its own.
 */
export class MemoryCallJournal implements CallJournal {
  readonly description = 'memory';
  private readonly byKey = new Map<string, KeptRecord>();
  private readonly host: string;
  private readonly maxRecords: number;

  constructor(options: MemoryCallJournalOptions = {}) {
    this.host = options.host ?? `${hostname()} pid ${process.pid}`;
    this.maxRecords = options.maxRecords ?? MEMORY_JOURNAL_MAX_RECORDS;
    for (const record of options.records ?? []) {
      const kept: KeptRecord = { entry: record.entry, host: record.host, begunAt: record.begunAt, outcome: record.outcome };
      this.byKey.set(recordKey(record.entry.planId, record.entry.key, record.entry.rerun ?? 0), kept);
    }
  }

  /** The last outcome of the call (a run again's, after an unknown one), or undefined while it is unknown or not ended. */
  find(planId: string, key: string): JournalOutcome | undefined {
    let last: JournalOutcome | undefined;
    for (let rerun = 0; ; rerun++) {
      const record = this.byKey.get(recordKey(planId, key, rerun));
      if (record === undefined) return last;
      const outcome = record.outcome;
      if (outcome === undefined) return undefined;
      last = outcome.kind === 'unknown' ? undefined : outcome;
      if (last !== undefined && rerun === 0) return last;
    }
  }

  async record(entry: JournalEntry, call: JournalCall): Promise<JournalReply> {
    const key = recordKey(entry.planId, entry.key, entry.rerun ?? 0);
    let record = this.byKey.get(key);
    if (record?.outcome !== undefined) return { outcome: record.outcome, replayed: true };
    let interrupted: InterruptedCall | undefined;
    if (record === undefined) {
      // Kept as the time it began in ms: most records are never read, and an ISO string per call is not free.
      record = { entry, host: this.host, begunAt: Date.now(), outcome: undefined };
      this.keep(key, record);
    } else {
      interrupted = {
        entry: record.entry,
        ...(record.host === undefined ? {} : { host: record.host }),
        ...(record.begunAt === undefined ? {} : { begunAt: isoOf(record.begunAt) }),
      };
    }
    const outcome = await call(interrupted);
    record.outcome = outcome;
    return { outcome, replayed: false };
  }

  /** Every record, oldest first: a copy. */
  records(planId?: string): JournalRecord[] {
    const records: JournalRecord[] = [];
    for (const record of this.byKey.values()) {
      if (planId !== undefined && record.entry.planId !== planId) continue;
      records.push({
        entry: record.entry,
        ...(record.host === undefined ? {} : { host: record.host }),
        ...(record.begunAt === undefined ? {} : { begunAt: isoOf(record.begunAt) }),
        ...(record.outcome === undefined ? {} : { outcome: record.outcome }),
      });
    }
    return records;
  }

  /** Forgets the records of a plan (when it is done for good). */
  forget(planId: string): void {
    for (const [key, record] of this.byKey) if (record.entry.planId === planId) this.byKey.delete(key);
  }

  private keep(key: string, record: KeptRecord): void {
    this.byKey.set(key, record);
    if (this.byKey.size <= this.maxRecords) return;
    for (const [oldest, kept] of this.byKey) {
      if (kept.outcome !== undefined) {
        this.byKey.delete(oldest);
        return;
      }
    }
  }
}

/** A record as the journal keeps it: its outcome set in place when the call ends. */
interface KeptRecord {
  readonly entry: JournalEntry;
  readonly host: string | undefined;
  /** ISO-8601 as given, or ms since the epoch. */
  readonly begunAt: string | number | undefined;
  outcome: JournalOutcome | undefined;
}

function isoOf(time: string | number): string {
  return typeof time === 'string' ? time : new Date(time).toISOString();
}

function recordKey(planId: string, key: string, rerun: number): string {
  return `${planId}\0${key}\0${rerun}`;
}

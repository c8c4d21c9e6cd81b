import { createHash } from 'node:crypto';
import { isResultHandle, type ResultRecord, type ResultStore, type ResultSummary, type ResultWriter, type StoredResult } from '@ca/tool-lifecycle';

/** Options of {@link RedisPlanRegistry.resultStore}. */
export interface RedisResultStoreOptions {
  /** How long a stored result lives at most, in ms (default 86,400,000: a day); refreshed by each write. */
  readonly ttlMs?: number;
}

/** How the store talks to Redis: a command, with bulk strings answered as `Buffer`s when asked. */
export type RedisCommand = (args: readonly (string | Buffer)[], buffers?: boolean) => Promise<unknown>;

const DEFAULT_TTL_MS = 86_400_000;

/**
 * The runtime's result store on Redis, for a fleet: a result stored by one
 * process can be read by any process that runs a step of the same plan. Keys
 * (all with a TTL, so nothing outlives a crashed process by long):
 *
 * - `<prefix>result:<plan hash>:<handle>:part` while it is written (`APPEND`),
 *   renamed to `…:data` when it is finished, and `…:meta` its record;
 * - `<prefix>results:<plan hash>`, the set of the plan's handles, for `dropPlan`.
 *
 * The plan hash is 32 hex digits of a SHA-256 of the plan id, so no plan id
 * can shape a key. Reads are `GETRANGE`s of the data.
 */
export class RedisResultStore implements ResultStore {
  readonly description: string;
  private readonly ttl: string;

  /** @throws TypeError for a `ttlMs` that is not a whole number of at least 1,000. */
  constructor(
    private readonly command: RedisCommand,
    private readonly keyPrefix: string,
    registry: string,
    options: RedisResultStoreOptions = {},
  ) {
    const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 1_000)
      throw new TypeError(`ttlMs must be a whole number of milliseconds, at least 1000; got ${String(options.ttlMs)}.`);
    this.ttl = String(ttlMs);
    this.description = `${registry} (results)`;
  }

  async create(record: ResultRecord): Promise<ResultWriter> {
    checkHandle(record.handle);
    const keys = this.keys(record.planId, record.handle);
    // The handle joins the plan's set first, so that dropPlan finds a document still being written.
    await this.command(['SADD', keys.plan, record.handle]);
    await this.command(['PEXPIRE', keys.plan, this.ttl]);
    let written = 0;
    return {
      append: async (chunk) => {
        await this.command(['APPEND', keys.part, Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)]);
        await this.command(['PEXPIRE', keys.part, this.ttl]);
        written += chunk.byteLength;
      },
      finish: async (summary: ResultSummary) => {
        if (written === 0) await this.command(['SET', keys.data, '', 'PX', this.ttl]);
        else await this.command(['RENAME', keys.part, keys.data]);
        const stored: StoredResult = { ...record, ...summary };
        await this.command(['SET', keys.meta, JSON.stringify(stored), 'PX', this.ttl]);
      },
      abort: async () => {
        await this.command(['DEL', keys.part]).catch(() => undefined);
      },
    };
  }

  async get(planId: string, handle: string): Promise<StoredResult | undefined> {
    if (!isResultHandle(handle)) return undefined;
    const meta = await this.command(['GET', this.keys(planId, handle).meta]);
    if (typeof meta !== 'string') return undefined;
    const stored = JSON.parse(meta) as StoredResult;
    return stored.planId === planId && stored.handle === handle && Number.isSafeInteger(stored.bytes) ? stored : undefined;
  }

  async read(planId: string, handle: string, start: number, end: number): Promise<Uint8Array> {
    checkHandle(handle);
    if (end <= start) return new Uint8Array(0);
    // GETRANGE takes an inclusive end.
    const bytes = await this.command(['GETRANGE', this.keys(planId, handle).data, String(start), String(end - 1)], true);
    if (!Buffer.isBuffer(bytes)) throw new Error(`the result store answered ${typeof bytes} for a range of '${handle}'`);
    return bytes;
  }

  async dropPlan(planId: string): Promise<void> {
    const set = this.keys(planId, 'res-').plan;
    const handles = (await this.command(['SMEMBERS', set])) as string[];
    const keys = handles.filter(isResultHandle).flatMap((handle) => {
      const each = this.keys(planId, handle);
      return [each.part, each.data, each.meta];
    });
    await this.command(['DEL', set, ...keys]);
  }

  private keys(planId: string, handle: string): { plan: string; part: string; data: string; meta: string } {
    const plan = createHash('sha256').update(planId).digest('hex').slice(0, 32);
    const base = `${this.keyPrefix}result:${plan}:${handle}`;
    return { plan: `${this.keyPrefix}results:${plan}`, part: `${base}:part`, data: `${base}:data`, meta: `${base}:meta` };
  }
}

function checkHandle(handle: string): void {
  if (!isResultHandle(handle)) throw new Error(`'${String(handle).slice(0, 80)}' is not a result handle`);
}

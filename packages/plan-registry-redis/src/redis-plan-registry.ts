import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { messageOf } from '@ca/domain';
import {
  PlanRegistryError,
  checkPlanControlMessage,
  checkPlanProgress,
  checkPlanRegistration,
  createConsoleLogger,
  parsePlanControlMessage,
  parseRegisteredPlan,
  planControlMessageKey,
  type PlanControlMessage,
  type PlanMessageHandler,
  type PlanProgress,
  type PlanRegistration,
  type PlanRegistry,
  type PlanRegistryEntry,
  type PlanSendResult,
  type RegisteredPlan,
  type RuntimeLogger,
} from '@ca/tool-lifecycle';
import { createClient, RESP_TYPES, type RedisClientType } from '@redis/client';
import { redactSecrets, resolveSettings, type RedisPlanRegistrySettings, type ResolvedSettings } from './redis-plan-registry-settings';
import { END_SCRIPT, PRUNE_SCRIPT, REGISTER_SCRIPT, SEND_SCRIPT, type RedisScript } from './redis-scripts';
import { RedisResultStore, type RedisResultStoreOptions } from './redis-result-store';

/** One plan of this process, as the registry remembers it to write it again after a reconnection. */
interface LocalPlan {
  readonly registration: string;
  readonly planId: string;
  readonly base: PlanRegistration;
  progress: PlanProgress;
  readonly onMessage: PlanMessageHandler;
  /** Messages already handed to the plan (key and time), so a queued copy is not handed over twice. */
  readonly delivered: Set<string>;
  /** Whether the record has reached the server once (a plan registered while disconnected has not). */
  written: boolean;
  ended: boolean;
}

/** The largest message read from the channel; anything longer is not one of ours. */
const MAX_WIRE_MESSAGE_BYTES = 64 * 1024;
/** How many index entries a `list` reads per round trip. */
const LIST_PAGE = 1_000;

type Client = RedisClientType;

/**
 * The message of an error from the client or the socket. Node's own errors
 * (TLS, DNS) come from another realm under test runners, where `instanceof
 * Error` fails: read `message` from any object.
 */
function errorText(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.length > 0 ? message : messageOf(error);
}

function isAuthError(error: unknown): boolean {
  return /\b(WRONGPASS|NOAUTH|NOPERM)\b|invalid username-password|Authentication required/i.test(errorText(error));
}

/** The longest text one broadcast carries. */
const MAX_BROADCAST_CHARS = 64 * 1024;

/**
 * A {@link PlanRegistry} on Redis, shared by every process that reaches the
 * same server and key prefix.
 *
 * - Each plan is a key `<prefix>plan:<id>` (a JSON record) with a TTL that
 *   every heartbeat refreshes, and an entry of the index `<prefix>index` (a
 *   sorted set scored by expiry), so `list` reads only the registry's keys. A
 *   process that dies stops refreshing: its plans leave the list within one TTL.
 * - A message to a plan is queued under `<prefix>pending:<id>` (per plan
 *   registration, with its own TTL) and published on the channel
 *   `<prefix>instance:<id>` of the registry instance that runs the plan, in one
 *   script. A connected process gets it at once; one that is reconnecting
 *   reads the queue once it is back, after writing its plans again (a server
 *   restarted without persistence has lost them).
 * - Two connections: one for commands, one subscribed to this instance's
 *   channel. Both reconnect forever, with a capped backoff. While disconnected,
 *   registrations and heartbeats are kept locally and written on reconnection;
 *   `list` and `send` fail at once with `PLAN_REGISTRY_UNAVAILABLE`.
 */
export class RedisPlanRegistry implements PlanRegistry {
  readonly description: string;
  readonly heartbeatIntervalMs: number;
  /** This registry's id: the channel its plans' messages arrive on. */
  readonly instance = randomUUID();
  private readonly settings: ResolvedSettings;
  private readonly logger: RuntimeLogger;
  private readonly plans = new Map<string, LocalPlan>();
  private readonly command: Client;
  private readonly subscriber: Client;
  private readonly channel: string;
  private started = false;
  private closing = false;
  private closed = false;
  private resyncing: Promise<void> | undefined;
  private resyncAgain = false;
  /** Set while the connection is down, so an outage is logged once. */
  private disconnected = false;
  /** The last error a connection reported, for the message when the first connection fails. */
  private lastConnectionError: unknown;

  /** Use {@link connectRedisPlanRegistry}, which connects before handing the registry out. */
  private constructor(settings: ResolvedSettings, logger: RuntimeLogger) {
    this.settings = settings;
    this.logger = logger;
    this.description = settings.description;
    this.heartbeatIntervalMs = settings.heartbeatIntervalMs;
    this.channel = `${settings.keyPrefix}instance:${this.instance}`;
    this.command = this.createConnection('commands');
    this.subscriber = this.createConnection('messages');
  }

  /** @internal Connects; see {@link connectRedisPlanRegistry}. */
  static async connect(settings: RedisPlanRegistrySettings): Promise<RedisPlanRegistry> {
    const resolved = resolveSettings(settings);
    const registry = new RedisPlanRegistry(resolved, settings.logger ?? createConsoleLogger());
    await registry.start();
    return registry;
  }

  async register(registration: PlanRegistration, onMessage: PlanMessageHandler): Promise<PlanRegistryEntry> {
    this.checkOpen();
    const base = checkPlanRegistration(registration, this.description);
    if (typeof onMessage !== 'function') {
      throw new PlanRegistryError({
        code: 'PLAN_REGISTRY_INVALID_ARGUMENT',
        registry: this.description,
        planId: base.planId,
        reason: 'onMessage must be a function',
      });
    }
    if (this.plans.has(base.planId)) {
      throw new PlanRegistryError({
        code: 'PLAN_REGISTRY_DUPLICATE_PLAN',
        registry: this.description,
        planId: base.planId,
        reason: 'this process runs it already',
      });
    }
    const plan: LocalPlan = {
      registration: randomUUID(),
      planId: base.planId,
      base,
      progress: { tools: base.tools, stepsDone: base.stepsDone, ...(base.pendingApprovals === undefined ? {} : { pendingApprovals: base.pendingApprovals }) },
      onMessage,
      delivered: new Set(),
      written: false,
      ended: false,
    };
    this.plans.set(plan.planId, plan);
    if (this.isReady()) {
      try {
        await this.write(plan, 'new');
      } catch (error) {
        if (PlanRegistryError.isInstance(error) && error.code === 'PLAN_REGISTRY_DUPLICATE_PLAN') {
          this.plans.delete(plan.planId);
          throw error;
        }
        // Lost the connection on the way: the plan is written once it is back.
        if (this.isReady()) {
          this.plans.delete(plan.planId);
          throw this.failure(error, plan.planId);
        }
      }
    }
    return {
      heartbeat: (progress) => this.heartbeat(plan, progress),
      end: () => this.end(plan),
    };
  }

  async list(): Promise<readonly RegisteredPlan[]> {
    this.checkOpen();
    this.checkReady();
    const index = this.key('index');
    try {
      const count = Number(await this.timed(this.evaluate(PRUNE_SCRIPT, [index], [])));
      const seen = new Map<string, RegisteredPlan>();
      let skipped = 0;
      for (let start = 0; start < count; start += LIST_PAGE) {
        const ids = (await this.timed(this.command.sendCommand(['ZRANGE', index, String(start), String(start + LIST_PAGE - 1)]))) as string[];
        if (ids.length === 0) break;
        const records = (await this.timed(this.command.sendCommand(['MGET', ...ids.map((id) => this.key('plan', id))]))) as (string | null)[];
        for (const text of records) {
          if (text === null) continue; // expired since the index was pruned
          const plan = parseRecord(text);
          if (plan === undefined) skipped++;
          else seen.set(plan.planId, plan);
        }
      }
      if (skipped > 0)
        this.logger.warn(
          `Plan registry ${this.description}: ${skipped} malformed plan record(s) were skipped (written by something other than a plan registry?).`,
          {},
        );
      return [...seen.values()].sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.planId.localeCompare(b.planId));
    } catch (error) {
      throw this.failure(error);
    }
  }

  async send(message: PlanControlMessage): Promise<PlanSendResult> {
    this.checkOpen();
    const checked = checkPlanControlMessage(message, this.description);
    this.checkReady(checked.planId);
    let reply: unknown;
    try {
      reply = await this.timed(
        this.evaluate(
          SEND_SCRIPT,
          [this.key('plan', checked.planId), this.key('pending', checked.planId)],
          [JSON.stringify(checked), planControlMessageKey(checked), String(this.settings.pendingTtlMs), `${this.settings.keyPrefix}instance:`],
        ),
      );
    } catch (error) {
      throw this.failure(error, checked.planId);
    }
    const receivers = Number((reply as unknown[])[0]);
    if (receivers < 0) throw new PlanRegistryError({ code: 'PLAN_REGISTRY_PLAN_NOT_FOUND', registry: this.description, planId: checked.planId });
    return { planId: checked.planId, delivery: receivers > 0 ? 'delivered' : 'queued' };
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const plans = [...this.plans.values()];
    await Promise.all(plans.map((plan) => this.end(plan)));
    this.closed = true;
    for (const client of [this.subscriber, this.command]) {
      try {
        if (client.isOpen) client.destroy();
      } catch {
        // Already closed.
      }
    }
  }

  /**
   * The runtime's result store (outputs over its budget, behind handles) on
   * the same server, key prefix and connection: a result one process stored
   * can be read by any process of the fleet that runs a step of the same
   * plan. Every key has a TTL (`ttlMs`, default a day); `dropPlan` deletes the
   * plan's keys when it ends. Give it to the runtime as `resultStore` (or
   * register it under `RESULT_STORE`). Its calls fail while the registry is
   * disconnected, like `list` and `send`.
   * @throws TypeError for a `ttlMs` under 1,000.
   */
  resultStore(options: RedisResultStoreOptions = {}): RedisResultStore {
    const buffers = { typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer } };
    const run = (args: readonly (string | Buffer)[], asBuffers?: boolean): Promise<unknown> => {
      this.checkOpen();
      this.checkReady();
      return this.timed(asBuffers === true ? this.command.sendCommand([...args], buffers) : this.command.sendCommand([...args]));
    };
    return new RedisResultStore(run, this.settings.keyPrefix, this.description, options);
  }

  /**
   * Sends `text` to every process of this registry (same server and key
   * prefix) that listens to `name` ({@link subscribeBroadcast}): the channel
   * `<keyPrefix>broadcast:<name>`. For what processes of a fleet must tell
   * each other that no plan owns — the MCP gateway's replicas pass on a
   * session's change notifications to the replica that holds its event
   * stream. At most once, to the processes listening now; nothing is kept.
   * @throws PlanRegistryError (`PLAN_REGISTRY_INVALID_ARGUMENT`) for a name or text out of range; `PLAN_REGISTRY_UNAVAILABLE` while disconnected.
   */
  async publishBroadcast(name: string, text: string): Promise<void> {
    this.checkOpen();
    const channel = this.broadcastChannel(name);
    if (typeof text !== 'string' || text.length > MAX_BROADCAST_CHARS) {
      throw new PlanRegistryError({
        code: 'PLAN_REGISTRY_INVALID_ARGUMENT',
        registry: this.description,
        reason: `a broadcast's text must be a string of at most ${MAX_BROADCAST_CHARS} characters`,
      });
    }
    this.checkReady();
    try {
      await this.timed(this.command.publish(channel, text));
    } catch (error) {
      throw this.failure(error);
    }
  }

  /**
   * Calls `handler` with each text published under `name` by any process of
   * this registry (this one included), on the registry's own subscriber
   * connection — subscribed again after a reconnection by the client. A
   * handler that throws is not told again of that text, and nothing else is
   * disturbed. Resolves, once subscribed, with the function that stops it.
   * @throws PlanRegistryError (`PLAN_REGISTRY_INVALID_ARGUMENT`) for a name out of range or a handler that is not a function.
   */
  async subscribeBroadcast(name: string, handler: (text: string) => void): Promise<() => Promise<void>> {
    this.checkOpen();
    const channel = this.broadcastChannel(name);
    if (typeof handler !== 'function') {
      throw new PlanRegistryError({ code: 'PLAN_REGISTRY_INVALID_ARGUMENT', registry: this.description, reason: 'a broadcast handler must be a function' });
    }
    const listener = (text: string): void => {
      try {
        handler(text);
      } catch (error) {
        this.logger.warn(`Plan registry ${this.description}: a handler of broadcast '${name}' threw: ${errorText(error)}`, {});
      }
    };
    try {
      await this.timed(this.subscriber.subscribe(channel, listener));
    } catch (error) {
      throw this.failure(error);
    }
    let stopped = false;
    return async () => {
      if (stopped || this.closing) return;
      stopped = true;
      await this.subscriber.unsubscribe(channel, listener).catch(() => undefined);
    };
  }

  private broadcastChannel(name: string): string {
    if (typeof name !== 'string' || !/^[A-Za-z0-9._:-]{1,100}$/.test(name)) {
      throw new PlanRegistryError({
        code: 'PLAN_REGISTRY_INVALID_ARGUMENT',
        registry: this.description,
        reason: 'a broadcast name is 1–100 letters, digits, dots, dashes, colons or underscores',
      });
    }
    return `${this.settings.keyPrefix}broadcast:${name}`;
  }

  /** Plans of this process the registry holds (for tests and leak checks). */
  get localPlanCount(): number {
    return this.plans.size;
  }

  // ---------------------------------------------------------------------------

  private async start(): Promise<void> {
    const deadline = Date.now() + this.settings.connectTimeoutMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => {
          const last = this.lastConnectionError === undefined ? '' : `${errorText(this.lastConnectionError)}; `;
          reject(Object.assign(new Error(`${last}no connection within ${this.settings.connectTimeoutMs} ms`), { cause: this.lastConnectionError }));
        },
        Math.max(1, deadline - Date.now()),
      );
    });
    try {
      await Promise.race([Promise.all([this.command.connect(), this.subscriber.connect()]), timeout]);
      await Promise.race([this.subscriber.subscribe(this.channel, (text) => this.receive(text)), timeout]);
      this.started = true;
    } catch (error) {
      this.closing = true;
      this.closed = true;
      for (const client of [this.command, this.subscriber]) {
        try {
          client.destroy();
        } catch {
          // Never opened.
        }
      }
      throw new PlanRegistryError({
        code: isAuthError(error) ? 'PLAN_REGISTRY_AUTH_FAILED' : 'PLAN_REGISTRY_UNAVAILABLE',
        registry: this.description,
        reason: this.redact(errorText(error)),
        ...(isAuthError(error)
          ? {
              advice: `Set the ACL user and password in the environment (REDIS_USERNAME, REDIS_PASSWORD)${this.settings.username === undefined ? '' : `; the user given is '${this.settings.username}'`}.`,
            }
          : { advice: 'Check that the server runs, that this machine reaches it, and the URL (rediss:// for TLS).' }),
        cause: error,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  private createConnection(role: string): Client {
    const settings = this.settings;
    let everReady = false;
    const startedAt = Date.now();
    const client = createClient({
      socket: {
        host: settings.host,
        port: settings.port,
        connectTimeout: Math.min(settings.connectTimeoutMs, 10_000),
        ...(settings.tls ? { tls: true as const, ...(settings.tlsOptions as object), ...serverName(settings) } : {}),
        reconnectStrategy: (retries: number, cause: Error) => {
          if (this.closing) return false;
          if (!everReady) {
            // Connecting for the first time: give up on refused credentials or at the deadline.
            if (isAuthError(cause)) return cause;
            if (Date.now() - startedAt >= settings.connectTimeoutMs) return cause;
          }
          return Math.min(settings.reconnectMaxDelayMs, 50 * 2 ** Math.min(retries, 10));
        },
      },
      ...(settings.username === undefined ? {} : { username: settings.username }),
      ...(settings.password === undefined ? {} : { password: settings.password }),
      database: settings.database,
      name: `ca-plan-registry-${role}`,
      // A command sent while disconnected fails at once instead of waiting in
      // a queue: plans are written again on reconnection anyway.
      disableOfflineQueue: true,
    }) as unknown as Client;
    client.on('error', (error: unknown) => this.connectionLost(role, error));
    client.on('ready', () => {
      everReady = true;
      if (this.started) this.reconnected();
    });
    return client;
  }

  private connectionLost(role: string, error: unknown): void {
    this.lastConnectionError = error;
    if (this.closing || !this.started) return;
    if (this.disconnected) return;
    this.disconnected = true;
    this.logger.warn(
      `Plan registry ${this.description}: the ${role} connection is lost (${this.redact(errorText(error))}); reconnecting. Plans keep running and are registered again once it is back.`,
      {
        registry: this.description,
      },
    );
  }

  private reconnected(): void {
    if (this.closing || !this.isReady()) return;
    if (this.disconnected) {
      this.disconnected = false;
      this.logger.info(`Plan registry ${this.description}: connected again; registering this process's plans again.`, { registry: this.description });
    }
    void this.resync();
  }

  /** Writes every plan of this process again and hands over what was queued for them meanwhile. */
  private resync(): Promise<void> {
    if (this.resyncing !== undefined) {
      this.resyncAgain = true;
      return this.resyncing;
    }
    this.resyncing = (async () => {
      do {
        this.resyncAgain = false;
        await Promise.all(
          [...this.plans.values()].map(async (plan) => {
            try {
              await this.write(plan, plan.written ? 'resync' : 'new');
            } catch (error) {
              if (PlanRegistryError.isInstance(error) && error.code === 'PLAN_REGISTRY_DUPLICATE_PLAN') {
                this.logger.error(
                  `${error.message} Plan '${plan.planId}' of this process runs on, but is not listed and cannot be reached through the registry.`,
                  { planId: plan.planId },
                );
                this.plans.delete(plan.planId);
                return;
              }
              if (this.isReady())
                this.logger.warn(`Plan registry ${this.description} could not register plan '${plan.planId}' again: ${this.redact(errorText(error))}`, {
                  planId: plan.planId,
                });
            }
          }),
        );
      } while (this.resyncAgain && !this.closing);
    })().finally(() => {
      this.resyncing = undefined;
    });
    return this.resyncing;
  }

  /**
   * Writes a plan's record: `new` at registration, `refresh` on a heartbeat,
   * `resync` after a reconnection. A heartbeat is not given a deadline of its
   * own (thousands are in flight at once on a busy host): the runtime sends no
   * second one for a plan while its first is pending, and a dead connection
   * fails it.
   */
  private async write(plan: LocalPlan, mode: 'new' | 'refresh' | 'resync'): Promise<void> {
    const { pendingApprovals: _registered, ...base } = plan.base;
    const pendingApprovals = plan.progress.pendingApprovals;
    const record = JSON.stringify({
      ...base,
      tools: plan.progress.tools,
      stepsDone: plan.progress.stepsDone,
      ...(pendingApprovals === undefined || pendingApprovals.length === 0 ? {} : { pendingApprovals }),
      host: this.settings.planHost,
      pid: process.pid,
      heartbeatAt: new Date().toISOString(),
      instance: this.instance,
      registration: plan.registration,
    });
    const writing = this.evaluate(
      REGISTER_SCRIPT,
      [this.key('plan', plan.planId), this.key('pending', plan.planId), this.key('index')],
      [record, String(this.settings.ttlMs), plan.registration, plan.planId, mode],
    );
    const reply = (await (mode === 'refresh' ? writing : this.timed(writing))) as string[];
    if (plan.ended) return;
    const [status, ...rest] = reply;
    if (status === 'duplicate') {
      const holder = parseRecord(rest[0] ?? '');
      throw new PlanRegistryError({
        code: 'PLAN_REGISTRY_DUPLICATE_PLAN',
        registry: this.description,
        planId: plan.planId,
        ...(holder === undefined ? {} : { reason: `it runs on host ${holder.host}, pid ${holder.pid}, since ${holder.startedAt}` }),
      });
    }
    if (status === 'taken') {
      this.logger.error(
        `Plan registry ${this.description}: plan id '${plan.planId}' was registered by another process while this one was away; this process's plan runs on, unlisted.`,
        {
          planId: plan.planId,
        },
      );
      this.plans.delete(plan.planId);
      return;
    }
    plan.written = true;
    for (const text of rest) this.deliver(plan, parseWire(text));
  }

  private async heartbeat(plan: LocalPlan, progress: PlanProgress): Promise<void> {
    if (plan.ended || this.closed) return;
    plan.progress = checkPlanProgress(progress, this.description, plan.planId);
    if (!this.isReady()) return; // written again on reconnection
    try {
      await this.write(plan, plan.written ? 'refresh' : 'new');
    } catch (error) {
      if (!this.isReady()) return;
      throw this.failure(error, plan.planId);
    }
  }

  private async end(plan: LocalPlan): Promise<void> {
    if (plan.ended) return;
    plan.ended = true;
    if (this.plans.get(plan.planId) === plan) this.plans.delete(plan.planId);
    if (!this.isReady()) return; // the record and the queue expire on their own
    try {
      await this.timed(
        this.evaluate(END_SCRIPT, [this.key('plan', plan.planId), this.key('pending', plan.planId), this.key('index')], [plan.registration, plan.planId]),
      );
    } catch (error) {
      this.logger.warn(
        `Plan registry ${this.description} could not withdraw plan '${plan.planId}'; it leaves the list within ${this.settings.ttlMs} ms: ${this.redact(errorText(error))}`,
        {
          planId: plan.planId,
        },
      );
    }
  }

  /** A message from this instance's channel: anyone who can publish there could have sent it, so it is checked. */
  private receive(text: string): void {
    const message = parseWire(text);
    const plan = message === undefined ? undefined : this.plans.get(message.planId);
    if (message === undefined || plan === undefined) {
      this.logger.debug(
        `Plan registry ${this.description}: ignored a message ${message === undefined ? 'that is not a control message this runtime knows' : `for plan '${message.planId}', which this process does not run`}.`,
        {},
      );
      return;
    }
    this.deliver(plan, message);
  }

  /** Hands a message to its plan once, whether it came over the channel, from the queue, or both. */
  private deliver(plan: LocalPlan, message: PlanControlMessage | undefined): void {
    if (plan.ended || message === undefined || message.planId !== plan.planId) return;
    const identity = `${planControlMessageKey(message)} ${message.sentAt}`;
    if (plan.delivered.has(identity)) return;
    plan.delivered.add(identity);
    try {
      plan.onMessage(message);
    } catch (error) {
      this.logger.error(`The message handler of plan '${plan.planId}' threw: ${messageOf(error)}`, { planId: plan.planId });
    }
  }

  private evaluate(script: RedisScript, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args];
    return this.command.sendCommand(['EVALSHA', script.sha, ...tail]).catch((error: unknown) => {
      // A server that restarted has forgotten the script: send it whole once.
      if (/NOSCRIPT/.test(messageOf(error))) return this.command.sendCommand(['EVAL', script.source, ...tail]);
      throw error;
    });
  }

  /** Waits for a command at most `commandTimeoutMs`: a server that stopped answering must not hang the caller. */
  private timed<T>(work: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.settings.commandTimeoutMs} ms`)), this.settings.commandTimeoutMs);
      timer.unref?.();
    });
    work.catch(() => undefined); // settled after the timeout: nobody waits for it any more
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }

  private key(kind: 'plan' | 'pending' | 'index', planId?: string): string {
    return planId === undefined ? `${this.settings.keyPrefix}${kind}` : `${this.settings.keyPrefix}${kind}:${planId}`;
  }

  private isReady(): boolean {
    return this.command.isReady && this.subscriber.isReady;
  }

  private checkReady(planId?: string): void {
    if (this.isReady()) return;
    throw new PlanRegistryError({
      code: 'PLAN_REGISTRY_UNAVAILABLE',
      registry: this.description,
      ...(planId === undefined ? {} : { planId }),
      reason: 'not connected (reconnecting)',
    });
  }

  private checkOpen(): void {
    if (this.closing) throw new PlanRegistryError({ code: 'PLAN_REGISTRY_CLOSED', registry: this.description });
  }

  private failure(error: unknown, planId?: string): PlanRegistryError {
    if (PlanRegistryError.isInstance(error)) return error;
    return new PlanRegistryError({
      code: isAuthError(error) ? 'PLAN_REGISTRY_AUTH_FAILED' : 'PLAN_REGISTRY_UNAVAILABLE',
      registry: this.description,
      ...(planId === undefined ? {} : { planId }),
      reason: this.redact(errorText(error)),
      cause: error,
    });
  }

  private redact(text: string): string {
    return redactSecrets(text, [this.settings.password]);
  }
}

/** The name the server's certificate must carry: the setting, else the URL's host unless it is an address (SNI takes names only). */
function serverName(settings: ResolvedSettings): { servername?: string } {
  const name = settings.tlsOptions?.servername ?? (isIP(settings.host) === 0 ? settings.host : undefined);
  return name === undefined ? {} : { servername: name };
}

/** A control message as text from the server, or `undefined` when it is not one this runtime knows. */
function parseWire(text: unknown): PlanControlMessage | undefined {
  if (typeof text !== 'string' || Buffer.byteLength(text) > MAX_WIRE_MESSAGE_BYTES) return undefined;
  try {
    return parsePlanControlMessage(JSON.parse(text));
  } catch {
    return undefined;
  }
}

function parseRecord(text: string): RegisteredPlan | undefined {
  try {
    return parseRegisteredPlan(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * Connects to Redis (both connections, within `connectTimeoutMs`) and returns
 * a registry ready for `registerToolRuntime` (under `PLAN_REGISTRY`) or
 * `new ToolRuntime({ planRegistry })`. After this first connection, the
 * registry reconnects on its own for as long as it is open.
 * @throws PlanRegistryError `PLAN_REGISTRY_INVALID_ARGUMENT` (a setting),
 *   `PLAN_REGISTRY_AUTH_FAILED` (refused credentials), `PLAN_REGISTRY_UNAVAILABLE`
 *   (no connection in time). Messages never contain the password.
 */
export function connectRedisPlanRegistry(settings: RedisPlanRegistrySettings): Promise<RedisPlanRegistry> {
  return RedisPlanRegistry.connect(settings);
}

import { messageOf } from '@ca/domain';
import type { BoundResource, ToolExecutionContext } from '@ca/tool-context';
import type { RuntimeLogger } from '@ca/tool-lifecycle';
import type { Root } from '@modelcontextprotocol/sdk/types.js';
import { linkToken } from './cancellation-link';
import type { ParsedMcpServer } from './mcp-config';
import type { McpSession } from './mcp-session';

/** What a session is opened for. */
export interface SessionRequest {
  /** For logs: `discovery`, `plan '<id>'`, `shared`. */
  readonly purpose: string;
  /** The plan it belongs to (plan scope). */
  readonly planId?: string;
  /** Its roots; absent: the roots capability is not declared. */
  readonly roots?: readonly Root[];
  readonly signal?: AbortSignal;
}

/** Settings of a {@link SessionPool}. */
export interface SessionPoolOptions {
  readonly server: ParsedMcpServer;
  /** Opens one session with the source's settings (handlers, transport, events). */
  readonly open: (request: SessionRequest) => Promise<McpSession>;
  readonly logger: RuntimeLogger;
  /** See `McpAdapterSettings.discoverySessionReuseMs`. */
  readonly discoverySessionReuseMs: number;
  readonly isDisposed: () => boolean;
}

interface PlanSession {
  readonly opening: Promise<McpSession>;
  session: McpSession | undefined;
  references: number;
}

/**
 * One session of a `shared` server's pool, with the plans given it as
 * their home and the roots it declares (every plan homed on it has those).
 */
interface PooledSession {
  readonly opening: Promise<McpSession>;
  session: McpSession | undefined;
  /** Plans homed here. */
  plans: number;
  /** The roots it declares, as a key ({@link rootsKey}); plans with other roots use other sessions. */
  rootsKey: string;
  roots: readonly Root[] | undefined;
  /** Set while the server is told about new roots (an idle session handed to plans with other roots). */
  rerooting: Promise<void> | undefined;
  /** Its end was logged (once). */
  endNoted: boolean;
}

/** Where a plan's requests to a `shared` server go: one pooled session, for as long as the plan holds it. */
interface Home {
  entry: PooledSession;
  /** Activations of the plan's tools of this server (leases). */
  references: number;
}

/** A discovery session kept for the first plan of its server (see `discoverySessionReuseMs`). */
interface ParkedSession {
  readonly session: McpSession;
  readonly timer: ReturnType<typeof setTimeout>;
}

/**
 * The roots a plan's session declares: its bound resources that are
 * `file:` URIs, named by their id, with their access in `_meta` (the
 * protocol has no field for it).
 *
 * @internal
 */
export function rootsOf(resources: readonly BoundResource[]): Root[] {
  return resources
    .filter((resource) => resource.uri.startsWith('file:'))
    .map((resource) => ({ uri: resource.uri, name: resource.id, _meta: { access: resource.access } }));
}

/**
 * The sessions of one server: one per plan (scope `plan`, reference-counted
 * by the plan's activated tools), or one shared by every plan (scope
 * `shared`, leased), plus the short-lived sessions that list its tools, one
 * of which may be kept for the first plan.
 *
 * @internal
 */
export class SessionPool {
  readonly #options: SessionPoolOptions;
  readonly #plans = new Map<string, PlanSession>();
  readonly #listing = new Set<McpSession>();
  /** Scope `shared`: the pool's sessions, in the order opened. */
  readonly #pool: PooledSession[] = [];
  /** Scope `shared`: the session each plan uses. */
  readonly #homes = new Map<string, Home>();
  #parked: ParkedSession | undefined;
  /** The server fetched its roots in some session: it uses them, so a plan waits for it to fetch its own. */
  #fetchesRoots = false;

  constructor(options: SessionPoolOptions) {
    this.#options = options;
  }

  /** How many leases plans hold on the shared pool (one per activated tool of a plan). */
  get sharedLeases(): number {
    let leases = 0;
    for (const home of this.#homes.values()) leases += home.references;
    return leases;
  }

  /** How many sessions of the shared pool are open (or opening). */
  get pooledSessions(): number {
    return this.#pool.filter((entry) => entry.session === undefined || entry.session.isOpen).length;
  }

  /** How many plans hold a session. */
  get openPlanSessions(): number {
    return this.#plans.size;
  }

  /** Records that the server fetched its roots (it confines itself to them). */
  noteRootsFetched(): void {
    this.#fetchesRoots = true;
  }

  /** The open session a plan uses, if its tools are activated. */
  sessionFor(planId: string): McpSession | undefined {
    if (this.#options.server.scope === 'shared') return this.#homeSession(planId);
    return this.#plans.get(planId)?.session;
  }

  /** Every open session (to refresh lists after a change), the shared one first. */
  openSessions(): McpSession[] {
    const sessions = [...this.#pool.map((entry) => entry.session), this.#parked?.session, ...[...this.#plans.values()].map((entry) => entry.session)];
    return sessions.filter((session): session is McpSession => session !== undefined && session.isOpen);
  }

  /**
   * Runs `list` on a session that can list the server: the shared one, or a
   * discovery session that is closed afterwards (or kept for the first plan,
   * with `discoverySessionReuseMs`).
   */
  async withListingSession<T>(signal: AbortSignal | undefined, list: (session: McpSession) => Promise<T>): Promise<T> {
    if (this.#options.server.scope === 'shared') return list(await this.#listingEntry().opening);
    const session = await this.#options.open({ purpose: 'discovery', ...this.#rootsFor([]), ...(signal === undefined ? {} : { signal }) });
    this.#listing.add(session);
    let keep = false;
    try {
      const result = await list(session);
      keep = this.#options.discoverySessionReuseMs > 0 && !this.#options.isDisposed() && session.isOpen;
      return result;
    } finally {
      this.#listing.delete(session);
      if (keep) this.#park(session);
      else await session.close();
    }
  }

  /** Opens the server's session for the plan of `ctx`, or leases the shared one. */
  async acquire(ctx: ToolExecutionContext): Promise<void> {
    if (this.#options.server.scope === 'shared') return this.#lease(ctx);
    let entry = this.#plans.get(ctx.planId);
    if (entry === undefined) {
      const created: PlanSession = { opening: this.#openForPlan(ctx), session: undefined, references: 0 };
      created.opening.then(
        (session) => (created.session = session),
        () => {
          if (this.#plans.get(ctx.planId) === created) this.#plans.delete(ctx.planId);
        },
      );
      this.#plans.set(ctx.planId, created);
      entry = created;
    }
    entry.references++;
    try {
      await entry.opening;
    } catch (error) {
      entry.references--;
      throw error;
    }
  }

  /** Releases what {@link SessionPool.acquire} took; closes a plan's session with its last tool. */
  async release(ctx: ToolExecutionContext): Promise<void> {
    if (this.#options.server.scope === 'shared') return this.#unlease(ctx.planId);
    const entry = this.#plans.get(ctx.planId);
    if (entry === undefined) return;
    entry.references--;
    if (entry.references > 0) return;
    this.#plans.delete(ctx.planId);
    const session = await entry.opening.catch(() => undefined);
    await session?.close();
  }

  /** Closes every session: shared, parked, listing, and those of plans not yet ended. */
  async dispose(): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const session of this.#listing) closing.push(session.close());
    const parked = this.#takeParked();
    if (parked !== undefined) closing.push(parked.close());
    for (const entry of this.#pool.splice(0))
      closing.push(
        entry.opening.then(
          (session) => session.close(),
          () => undefined,
        ),
      );
    this.#homes.clear();
    for (const entry of this.#plans.values())
      closing.push(
        entry.opening.then(
          (session) => session.close(),
          () => undefined,
        ),
      );
    this.#plans.clear();
    await Promise.all(closing);
  }

  // ---------------------------------------------------------------------------

  async #openForPlan(ctx: ToolExecutionContext): Promise<McpSession> {
    const server = this.#options.server;
    const roots = this.#rootsFor(rootsOf(ctx.resources));
    const parked = this.#takeParked();
    if (parked !== undefined) {
      this.#options.logger.debug(`MCP server '${server.name}': plan '${ctx.planId}' takes over the discovery session.`, { server: server.name });
      const fetched = parked.rootsFetches;
      // The parked session's own count too: its server may have asked in the very read that ended discovery.
      const usesRoots = this.#fetchesRoots || fetched > 0;
      await parked.assignPlan(ctx.planId, roots.roots);
      if (usesRoots && roots.roots !== undefined && roots.roots.length > 0) await parked.waitForRootsFetch(fetched);
      return parked;
    }
    const link = linkToken(ctx.cancellationToken, { planId: ctx.planId });
    try {
      const session = await this.#options.open({ purpose: `plan '${ctx.planId}'`, planId: ctx.planId, ...roots, signal: link.signal });
      if (this.#fetchesRoots && roots.roots !== undefined && roots.roots.length > 0) await session.waitForRootsFetch(0);
      return session;
    } finally {
      link.release();
    }
  }

  #rootsFor(roots: readonly Root[]): { roots?: readonly Root[] } {
    return this.#options.server.roots ? { roots } : {};
  }

  /** Keeps a discovery session for the first plan of its server, for at most `discoverySessionReuseMs`. */
  #park(session: McpSession): void {
    void this.#takeParked()?.close();
    const timer = setTimeout(() => {
      if (this.#parked?.session !== session) return;
      this.#parked = undefined;
      void session.close();
    }, this.#options.discoverySessionReuseMs);
    // The server's pipes keep the process alive while the session is open; the timer need not.
    timer.unref?.();
    this.#parked = { session, timer };
  }

  /** Removes the parked session and returns it when it is still open (closing it otherwise). */
  #takeParked(): McpSession | undefined {
    const parked = this.#parked;
    if (parked === undefined) return undefined;
    this.#parked = undefined;
    clearTimeout(parked.timer);
    if (parked.session.isOpen) return parked.session;
    void parked.session.close();
    return undefined;
  }

  // --- scope `shared`: the pool ----------------------------------------------

  /** Gives the plan of `ctx` its home in the pool (once per plan), and counts one lease. */
  async #lease(ctx: ToolExecutionContext): Promise<void> {
    let home = this.#homes.get(ctx.planId);
    if (home === undefined) {
      const entry = this.#pick(this.#rootsFor(rootsOf(ctx.resources)).roots);
      entry.plans++;
      home = { entry, references: 0 };
      this.#homes.set(ctx.planId, home);
    }
    home.references++;
    const entry = home.entry;
    try {
      await entry.opening;
      await entry.rerooting;
    } catch (error) {
      await this.#unlease(ctx.planId);
      throw error;
    }
  }

  /** Gives back one lease; the plan's last gives up its home (and its resource subscriptions there). */
  async #unlease(planId: string): Promise<void> {
    const home = this.#homes.get(planId);
    if (home === undefined) return;
    if (--home.references > 0) return;
    this.#homes.delete(planId);
    home.entry.plans--;
    const session = home.entry.session;
    if (session !== undefined && session.isOpen && session.subscribers.size > 0) await this.#unsubscribeAll(session, planId);
  }

  /** Ends the subscriptions of a plan that no longer uses the session; the server is told about those no other plan holds. */
  async #unsubscribeAll(session: McpSession, planId: string): Promise<void> {
    for (const [uri, plans] of [...session.subscribers]) {
      if (!plans.delete(planId) || plans.size > 0) continue;
      session.subscribers.delete(uri);
      try {
        await session.client.unsubscribeResource({ uri }, { timeout: this.#options.server.callTimeoutMs });
      } catch (error) {
        this.#options.logger.debug(`MCP server '${this.#options.server.name}': ending the subscription to ${uri} failed: ${messageOf(error)}`, {
          server: this.#options.server.name,
          planId,
        });
      }
    }
  }

  /**
   * The session for a new plan with `roots`: an idle one of the same roots;
   * else a new one while the pool holds fewer than `poolSize` with those
   * roots (an idle one with other roots is given the new roots instead,
   * when they are not empty); else the one serving the fewest plans.
   */
  #pick(roots: readonly Root[] | undefined): PooledSession {
    this.#dropEnded();
    const key = rootsKey(roots);
    let least: PooledSession | undefined;
    let size = 0;
    for (const entry of this.#pool) {
      if (entry.rootsKey !== key) continue;
      if (entry.plans === 0) return entry;
      size++;
      if (least === undefined || entry.plans < least.plans) least = entry;
    }
    if (size < this.#options.server.poolSize || least === undefined) {
      // A server told new roots replaces its old ones; told empty roots, some keep the old (server-filesystem): only non-empty roots move a session.
      const idle = roots !== undefined && roots.length > 0 ? this.#pool.find((entry) => entry.plans === 0 && entry.session?.isOpen === true) : undefined;
      if (idle !== undefined) return this.#reroot(idle, roots as readonly Root[]);
      return this.#openEntry(roots);
    }
    return least;
  }

  /** A session to list the server on: any open one (or one opening), else a new one with no roots. */
  #listingEntry(): PooledSession {
    this.#dropEnded();
    return this.#pool.find((entry) => entry.session?.isOpen === true) ?? this.#pool[0] ?? this.#openEntry(this.#rootsFor([]).roots);
  }

  #openEntry(roots: readonly Root[] | undefined): PooledSession {
    const number = this.#pool.length + 1;
    const opening = this.#options.open({
      purpose: `shared (pool session ${number} of at most ${this.#options.server.poolSize})`,
      ...(roots === undefined ? {} : { roots }),
    });
    const entry: PooledSession = { opening, session: undefined, plans: 0, rootsKey: rootsKey(roots), roots, rerooting: undefined, endNoted: false };
    this.#pool.push(entry);
    opening.then(
      (session) => {
        entry.session = session;
        if (this.#options.isDisposed() || !this.#pool.includes(entry)) void session.close();
      },
      () => this.#remove(entry),
    );
    if (roots !== undefined && roots.length > 0) {
      // A server known to confine itself to its roots: the plans wait until it fetched these.
      entry.rerooting = opening.then(async (session) => {
        if (this.#fetchesRoots) await session.waitForRootsFetch(0);
      });
      entry.rerooting.catch(() => undefined);
    }
    return entry;
  }

  /** Hands an idle pooled session to plans with other (non-empty) roots. */
  #reroot(entry: PooledSession, roots: readonly Root[]): PooledSession {
    const session = entry.session as McpSession;
    const fetched = session.rootsFetches;
    entry.rootsKey = rootsKey(roots);
    entry.roots = roots;
    this.#options.logger.debug(`MCP server '${this.#options.server.name}': an idle pooled session is given other roots.`, {
      server: this.#options.server.name,
    });
    entry.rerooting = (async () => {
      await session.reroot(roots);
      if (this.#fetchesRoots || fetched > 0) await session.waitForRootsFetch(fetched);
    })();
    return entry;
  }

  /** The session a plan's requests go to (scope `shared`). */
  #homeSession(planId: string): McpSession | undefined {
    return this.#homes.get(planId)?.entry.session;
  }

  /**
   * Scope `shared`, after the plan's session ended (its server exited, the
   * connection broke): moves the plan to a live session of the pool with
   * the same roots, opening one if none is left, and returns it; undefined
   * for scope `plan`, an unknown plan, a disposed source, or when a new
   * session could not be opened (the caller reports the old one's end).
   */
  async replacementFor(planId: string): Promise<McpSession | undefined> {
    const home = this.#homes.get(planId);
    if (this.#options.server.scope !== 'shared' || home === undefined || this.#options.isDisposed()) return undefined;
    if (home.entry.session?.isOpen === true) return home.entry.session;
    this.#dropEnded();
    const key = home.entry.rootsKey;
    const next =
      this.#pool.find((entry) => entry.rootsKey === key && entry.session?.isOpen === true) ??
      this.#pool.find((entry) => entry.rootsKey === key && entry.session === undefined) ??
      this.#openEntry(home.entry.roots);
    try {
      const session = await next.opening;
      await next.rerooting;
      if (this.#homes.get(planId) === home && home.entry !== next) this.#move(home, next);
      return session.isOpen ? session : undefined;
    } catch (error) {
      this.#options.logger.warn(`MCP server '${this.#options.server.name}' could not be started again for plan '${planId}': ${messageOf(error)}`, {
        server: this.#options.server.name,
        planId,
      });
      return undefined;
    }
  }

  #move(home: Home, to: PooledSession): void {
    home.entry.plans--;
    to.plans++;
    home.entry = to;
  }

  /** Removes the pooled sessions that ended (the server exited, the connection broke), saying so once each. */
  #dropEnded(): void {
    for (const entry of [...this.#pool]) {
      if (entry.session === undefined || entry.session.isOpen) continue;
      if (!entry.endNoted) {
        entry.endNoted = true;
        this.#options.logger.warn(`The shared session with MCP server '${this.#options.server.name}' had ended; opening a new one.`, {
          server: this.#options.server.name,
        });
      }
      this.#remove(entry);
      void entry.session.close();
    }
  }

  #remove(entry: PooledSession): void {
    const index = this.#pool.indexOf(entry);
    if (index >= 0) this.#pool.splice(index, 1);
  }
}

/** A key telling sets of roots apart (`''`: the roots capability is not declared). */
function rootsKey(roots: readonly Root[] | undefined): string {
  if (roots === undefined) return '';
  return JSON.stringify(roots.map((root) => [root.uri, root._meta?.['access'] ?? null]));
}

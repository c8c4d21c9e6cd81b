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

interface SharedSession {
  readonly opening: Promise<McpSession>;
  session: McpSession | undefined;
  leases: number;
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
  #shared: SharedSession | undefined;
  #parked: ParkedSession | undefined;
  /** The server fetched its roots in some session: it uses them, so a plan waits for it to fetch its own. */
  #fetchesRoots = false;

  constructor(options: SessionPoolOptions) {
    this.#options = options;
  }

  /** How many plans lease the shared session. */
  get sharedLeases(): number {
    return this.#shared?.leases ?? 0;
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
    if (this.#options.server.scope === 'shared') return this.#shared?.session;
    return this.#plans.get(planId)?.session;
  }

  /** Every open session (to refresh lists after a change), the shared one first. */
  openSessions(): McpSession[] {
    const sessions = [this.#shared?.session, this.#parked?.session, ...[...this.#plans.values()].map((entry) => entry.session)];
    return sessions.filter((session): session is McpSession => session !== undefined && session.isOpen);
  }

  /**
   * Runs `list` on a session that can list the server: the shared one, or a
   * discovery session that is closed afterwards (or kept for the first plan,
   * with `discoverySessionReuseMs`).
   */
  async withListingSession<T>(signal: AbortSignal | undefined, list: (session: McpSession) => Promise<T>): Promise<T> {
    if (this.#options.server.scope === 'shared') return list(await this.#sharedSession().opening);
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
    if (this.#options.server.scope === 'shared') {
      const shared = this.#sharedSession();
      shared.leases++;
      try {
        await shared.opening;
      } catch (error) {
        shared.leases--;
        throw error;
      }
      return;
    }
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
    if (this.#options.server.scope === 'shared') {
      if (this.#shared !== undefined && this.#shared.leases > 0) this.#shared.leases--;
      return;
    }
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
    const shared = this.#shared;
    this.#shared = undefined;
    if (shared !== undefined)
      closing.push(
        shared.opening.then(
          (session) => session.close(),
          () => undefined,
        ),
      );
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

  /** The shared session, opening (or reopening, when it died) it as needed. */
  #sharedSession(): SharedSession {
    const current = this.#shared;
    if (current !== undefined && (current.session === undefined || current.session.isOpen)) return current;
    const server = this.#options.server;
    if (current?.session !== undefined) {
      this.#options.logger.warn(`The shared session with MCP server '${server.name}' had ended; opening a new one.`, { server: server.name });
      void current.session.close();
    }
    const opening = this.#options.open({ purpose: 'shared' });
    const shared: SharedSession = { opening, session: undefined, leases: current?.leases ?? 0 };
    this.#shared = shared;
    opening.then(
      (session) => {
        shared.session = session;
        if (this.#options.isDisposed() || this.#shared !== shared) void session.close();
      },
      () => {
        if (this.#shared === shared) this.#shared = undefined;
      },
    );
    return shared;
  }
}

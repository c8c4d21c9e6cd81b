import { describeValue } from '@ca/domain';
import { invalidArgument } from '../errors/mcp-gateway-error';

/** The limits of {@link SessionLimits}, as `serveHttp` takes them. */
export interface SessionLimitSettings {
  /** Most sessions one server (replica) holds. */
  readonly maxSessions: number;
  /** Most sessions one client holds (a client: the token's client and subject when signed in, else the address it comes from). */
  readonly maxSessionsPerClient: number;
  /** Most requests one client makes in a minute (every session of it together); `undefined`: no cap. */
  readonly requestsPerMinute: number | undefined;
  /** Clients held only to the server's limit, not to `maxSessionsPerClient` (the server's own machine). */
  readonly exempt?: (client: string) => boolean;
}

/** What a limit decided about a new session. */
export type Admission<K> =
  | { readonly admit: true; readonly evict?: { readonly key: K; readonly reason: string } }
  | { readonly admit: false; readonly limit: 'replica' | 'client'; readonly max: number };

/** What the limits need to know about an open session. */
export interface LimitedSession {
  readonly client: string;
  /** Requests in progress and open streams. */
  readonly active: number;
  readonly lastSeen: number;
}

/** A token bucket per client: `perMinute` requests a minute, bursts up to the same number. */
class RateBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly perMinute: number) {}

  /** Takes one request's token; `undefined` when it may go, else the ms until one is free. */
  take(client: string, now: number): number | undefined {
    const refill = this.perMinute / 60_000;
    const bucket = this.buckets.get(client) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * refill);
    bucket.at = now;
    if (bucket.tokens < 1) {
      this.buckets.set(client, bucket);
      return Math.ceil((1 - bucket.tokens) / refill);
    }
    bucket.tokens -= 1;
    this.buckets.set(client, bucket);
    return undefined;
  }

  /** Forgets the clients whose buckets have filled up again, so one-shot clients leave nothing behind. */
  prune(now: number): void {
    for (const [client, bucket] of this.buckets)
      if (bucket.tokens + ((now - bucket.at) * this.perMinute) / 60_000 >= this.perMinute) this.buckets.delete(client);
  }
}

/**
 * Sessions per replica and per client, and requests per client: when a new
 * session would pass a limit, the least recently used idle session (no
 * request in progress, no open stream) of that scope makes room — clients
 * that never delete their sessions (one-shot CLIs, the conformance runner)
 * never lock the server out; only when every session of the scope is busy is
 * the new one refused.
 * @internal
 */
export class SessionLimits<K> {
  private readonly rates: RateBuckets | undefined;

  constructor(readonly settings: SessionLimitSettings) {
    const { maxSessions, maxSessionsPerClient, requestsPerMinute } = settings;
    if (!Number.isSafeInteger(maxSessions) || maxSessions < 1) throw invalidArgument('maxSessions', 'a whole number ≥ 1', describeValue(maxSessions));
    if (!Number.isSafeInteger(maxSessionsPerClient) || maxSessionsPerClient < 1)
      throw invalidArgument('maxSessionsPerClient', 'a whole number ≥ 1', describeValue(maxSessionsPerClient));
    if (requestsPerMinute !== undefined && (!Number.isSafeInteger(requestsPerMinute) || requestsPerMinute < 1))
      throw invalidArgument('requestsPerMinute', 'a whole number ≥ 1', describeValue(requestsPerMinute));
    this.rates = requestsPerMinute === undefined ? undefined : new RateBuckets(requestsPerMinute);
  }

  /**
   * Whether `client` may open one more session beside `sessions` (and
   * `opening` being opened): yes, yes after evicting one idle session, or no.
   */
  admit(client: string, sessions: ReadonlyMap<K, LimitedSession>, opening: number): Admission<K> {
    let ofClient = 0;
    for (const session of sessions.values()) if (session.client === client) ofClient++;
    // A client cap as high as the server's is the server's.
    const capped = this.settings.maxSessionsPerClient < this.settings.maxSessions && this.settings.exempt?.(client) !== true;
    if (capped && ofClient >= this.settings.maxSessionsPerClient) {
      const key = this.leastRecentlyUsedIdle(sessions, client);
      if (key === undefined) return { admit: false, limit: 'client', max: this.settings.maxSessionsPerClient };
      return { admit: true, evict: { key, reason: `its client opened a new session beyond its ${this.settings.maxSessionsPerClient}` } };
    }
    if (sessions.size + opening >= this.settings.maxSessions) {
      const key = this.leastRecentlyUsedIdle(sessions, undefined);
      if (key === undefined) return { admit: false, limit: 'replica', max: this.settings.maxSessions };
      return { admit: true, evict: { key, reason: `the server holds ${this.settings.maxSessions} sessions and a new client came` } };
    }
    return { admit: true };
  }

  /** `undefined` when `client` may make one more request now, else the ms to wait. */
  throttle(client: string, now = Date.now()): number | undefined {
    return this.rates?.take(client, now);
  }

  /** Forgets what it no longer needs (call now and then). */
  prune(now = Date.now()): void {
    this.rates?.prune(now);
  }

  private leastRecentlyUsedIdle(sessions: ReadonlyMap<K, LimitedSession>, client: string | undefined): K | undefined {
    let found: K | undefined;
    let oldest = Number.POSITIVE_INFINITY;
    for (const [key, session] of sessions) {
      if (session.active > 0 || (client !== undefined && session.client !== client)) continue;
      if (session.lastSeen < oldest) {
        oldest = session.lastSeen;
        found = key;
      }
    }
    return found;
  }
}

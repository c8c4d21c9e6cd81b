import { createHash } from 'node:crypto';
import { messageOf } from '@ca/domain';
import type { RuntimeLogger } from '@ca/tool-lifecycle';

/**
 * What a fleet's replicas tell each other through: a channel every replica
 * publishes to and hears. The Redis plan registry of
 * `@ca/plan-registry-redis` is one (`publishBroadcast`, `subscribeBroadcast`).
 */
export interface FleetBroadcast {
  publishBroadcast(name: string, text: string): Promise<void>;
  subscribeBroadcast(name: string, handler: (text: string) => void): Promise<() => Promise<void>>;
}

/** A registry (or anything) that can broadcast. */
export function isFleetBroadcast(value: unknown): value is FleetBroadcast {
  const candidate = value as Partial<FleetBroadcast> | null | undefined;
  return typeof candidate?.publishBroadcast === 'function' && typeof candidate.subscribeBroadcast === 'function';
}

/** The notifications a session's replica passes on to the replica holding the client's event stream: changes, not answers. */
const RELAYED = new Set([
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
]);

/** A notification of a session, as it travels between replicas. */
export interface RelayedNotification {
  readonly jsonrpc?: '2.0';
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

/** Whether a message a session sends is a change a client hears on its event stream (and so may be relayed). */
export function isRelayed(message: unknown): message is RelayedNotification {
  const candidate = message as { id?: unknown; method?: unknown } | null;
  return (
    typeof candidate === 'object' && candidate !== null && candidate.id === undefined && typeof candidate.method === 'string' && RELAYED.has(candidate.method)
  );
}

/** What a notification is about, for telling one already sent from the same again (a change every replica saw). */
export function notificationKey(message: RelayedNotification): string {
  const uri = message.params?.['uri'];
  return typeof uri === 'string' ? `${message.method} ${uri}` : message.method;
}

/**
 * Passes a session's change notifications between the replicas of a fleet.
 * A 2025-era client hears changes on its event stream (`GET`), held by one
 * replica, while the change may happen on another: the one whose upstream
 * connection sent a resource update for a subscription made through it, or
 * whose catalog changed. A replica that does not hold the session's stream
 * publishes the notification; the replica that holds it sends it on. The
 * channel is named after the fleet's key, so two fleets on one Redis never
 * hear each other.
 * @internal
 */
export class FleetRelay {
  private constructor(
    private readonly bus: FleetBroadcast,
    private readonly channel: string,
    private readonly replica: string,
    private readonly logger: RuntimeLogger,
    private stop: (() => Promise<void>) | undefined,
  ) {}

  /** Subscribes to the fleet's channel; `deliver` is called with each notification another replica relays. */
  static async start(
    bus: FleetBroadcast,
    key: Uint8Array | string,
    replica: string,
    logger: RuntimeLogger,
    deliver: (sid: string, notification: RelayedNotification) => void,
  ): Promise<FleetRelay> {
    const channel = `mcp-fleet-${createHash('sha256')
      .update(typeof key === 'string' ? key : Buffer.from(key))
      .digest('hex')
      .slice(0, 16)}`;
    const relay = new FleetRelay(bus, channel, replica, logger, undefined);
    relay.stop = await bus.subscribeBroadcast(channel, (text) => {
      const event = parseEvent(text);
      if (event === undefined || event.from === replica) return;
      // A JSON-RPC notification again: a client drops a message without `jsonrpc`.
      deliver(event.sid, { jsonrpc: '2.0', method: event.method, ...(event.params === undefined ? {} : { params: event.params }) });
    });
    return relay;
  }

  /** Tells the other replicas of a notification of session `sid` that this one has no stream to send it on. Never throws. */
  publish(sid: string, notification: RelayedNotification): void {
    const text = JSON.stringify({
      v: 1,
      from: this.replica,
      sid,
      method: notification.method,
      ...(notification.params === undefined ? {} : { params: notification.params }),
    });
    this.bus.publishBroadcast(this.channel, text).catch((error: unknown) => {
      this.logger.warn(`MCP over HTTP: could not pass a ${notification.method} of a session on to the other replicas: ${messageOf(error)}`, {});
    });
  }

  async close(): Promise<void> {
    const stop = this.stop;
    this.stop = undefined;
    await stop?.().catch(() => undefined);
  }
}

/** An event of the channel, or `undefined` for anything that is not one (the channel is shared with whatever else can reach the server). */
function parseEvent(text: string): { from: string; sid: string; method: string; params?: Record<string, unknown> } | undefined {
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { v, from, sid, method, params } = (event ?? {}) as Record<string, unknown>;
  if (v !== 1 || typeof from !== 'string' || typeof sid !== 'string' || sid.length > 100 || typeof method !== 'string' || !RELAYED.has(method))
    return undefined;
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) return undefined;
  return { from, sid, method, ...(params === undefined ? {} : { params: params as Record<string, unknown> }) };
}

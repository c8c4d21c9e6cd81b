import { createHash } from 'node:crypto';
import { messageOf } from '@ca/domain';
import { canonicalJson, type ApprovalRequest, type RuntimeLogger } from '@ca/tool-lifecycle';
import type { SessionApprovals, SharedApproval } from '../clients/gateway-clients';
import { derivedKey, macMatches, macOf } from './fleet-keys';

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

/**
 * An approval a person gave for the rest of a session's plan, as it travels
 * between replicas: the tool (by name and definition fingerprint) and, for
 * `call`, the hash of the arguments approved.
 */
export interface RelayedApproval {
  readonly toolName: string;
  readonly fingerprint: string;
  readonly argumentsHash?: string;
  readonly scope: 'tool' | 'call';
  readonly decidedBy: string;
}

/** The longest event a replica publishes (the Redis registry's limit of a broadcast). */
const MAX_EVENT_CHARS = 64 * 1024;

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
    /** Signs approvals: whoever can publish on the channel (anyone who reaches Redis) cannot forge one without the fleet's key. */
    private readonly approvalKey: Buffer,
    private readonly replica: string,
    private readonly logger: RuntimeLogger,
    private stop: (() => Promise<void>) | undefined,
  ) {}

  /**
   * Subscribes to the fleet's channel; `deliver` is called with each
   * notification another replica relays, `approved` with each approval whose
   * signature holds.
   */
  static async start(
    bus: FleetBroadcast,
    /** The fleet's key, as `SessionSeal.keyOf` reads it. */
    fleetKey: Buffer,
    replica: string,
    logger: RuntimeLogger,
    deliver: (sid: string, notification: RelayedNotification) => void,
    approved: (sid: string, approval: RelayedApproval) => void = () => undefined,
  ): Promise<FleetRelay> {
    const channel = `mcp-fleet-${createHash('sha256').update(fleetKey).digest('hex').slice(0, 16)}`;
    const approvalKey = derivedKey(fleetKey, 'ca.mcp-fleet.approvals/1');
    const relay = new FleetRelay(bus, channel, approvalKey, replica, logger, undefined);
    relay.stop = await bus.subscribeBroadcast(channel, (text) => {
      // Anyone who reaches Redis can publish here: nothing longer than a replica sends is even parsed.
      if (typeof text !== 'string' || text.length > MAX_EVENT_CHARS) return;
      const signed = parseApproval(text);
      if (signed !== undefined) {
        if (signed.from === replica) return;
        if (!macMatches(signed.mac, approvalMac(approvalKey, signed.sid, signed.approval))) {
          logger.warn('MCP over HTTP: ignored an approval on the fleet channel whose signature does not hold (not from a replica with the fleet key).', {});
          return;
        }
        approved(signed.sid, signed.approval);
        return;
      }
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

  /** Tells the other replicas of an approval given here for the rest of session `sid`'s plan, signed. Never throws. */
  publishApproval(sid: string, approval: RelayedApproval): void {
    const mac = approvalMac(this.approvalKey, sid, approval).toString('base64url');
    const text = JSON.stringify({ v: 1, kind: 'approval', from: this.replica, sid, approval, mac });
    this.bus.publishBroadcast(this.channel, text).catch((error: unknown) => {
      this.logger.warn(`MCP over HTTP: could not tell the other replicas of an approval of '${approval.toolName}' for a session: ${messageOf(error)}`, {});
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

/** The signature of an approval for a session: every field, one per line (none holds a line break that could shift another). */
function approvalMac(key: Buffer, sid: string, approval: RelayedApproval): Buffer {
  const fields = [sid, approval.toolName, approval.fingerprint, approval.argumentsHash ?? '', approval.scope, approval.decidedBy];
  return macOf(key, fields.map((field) => JSON.stringify(field)).join('\n'));
}

/** A signed approval event of the channel, or `undefined` when the text is not one. */
function parseApproval(text: string): { from: string; sid: string; approval: RelayedApproval; mac: string } | undefined {
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { v, kind, from, sid, approval, mac } = (event ?? {}) as Record<string, unknown>;
  if (v !== 1 || kind !== 'approval' || typeof from !== 'string' || typeof sid !== 'string' || sid.length > 100 || typeof mac !== 'string') return undefined;
  const { toolName, fingerprint, argumentsHash, scope, decidedBy } = (approval ?? {}) as Record<string, unknown>;
  if (typeof toolName !== 'string' || toolName.length > 300 || typeof fingerprint !== 'string' || fingerprint.length > 200) return undefined;
  if (argumentsHash !== undefined && (typeof argumentsHash !== 'string' || argumentsHash.length > 200)) return undefined;
  if ((scope !== 'tool' && scope !== 'call') || (scope === 'call') !== (argumentsHash !== undefined)) return undefined;
  if (typeof decidedBy !== 'string' || decidedBy.length > 500) return undefined;
  return {
    from,
    sid,
    mac,
    approval: { toolName, fingerprint, scope, decidedBy, ...(argumentsHash === undefined ? {} : { argumentsHash: argumentsHash as string }) },
  };
}

/** Sessions whose approvals a replica keeps, and approvals a session: the oldest go first. */
const MAX_SHARED_SESSIONS = 10_000;
const MAX_SHARED_PER_SESSION = 200;

/**
 * The approvals given "for the rest of the plan" in the sessions a fleet
 * serves, on this replica: those given here (told to the others, signed)
 * and those the others told of. A replica's plan of a session then does not
 * ask again about a tool (or arguments) a person approved for the session on
 * another replica. Kept in memory, bounded; a replica that starts later
 * knows only what is told from then on (its plan asks, as before).
 * @internal
 */
export class FleetSessionApprovals implements SessionApprovals {
  private readonly sessions = new Map<string, Map<string, SharedApproval>>();

  constructor(private readonly relay: FleetRelay) {}

  find(sessionId: string, request: ApprovalRequest): SharedApproval | undefined {
    const known = this.sessions.get(sessionId);
    if (known === undefined) return undefined;
    const forTool = known.get(approvalKey(request.toolName, request.fingerprint, undefined));
    if (forTool !== undefined) return forTool;
    const hash = argumentsHashOf(request.arguments);
    return hash === undefined ? undefined : known.get(approvalKey(request.toolName, request.fingerprint, hash));
  }

  remember(sessionId: string, request: ApprovalRequest, approval: SharedApproval): void {
    const argumentsHash = approval.scope === 'call' ? argumentsHashOf(request.arguments) : undefined;
    if (approval.scope === 'call' && argumentsHash === undefined) return;
    const relayed: RelayedApproval = {
      toolName: request.toolName,
      fingerprint: request.fingerprint,
      scope: approval.scope,
      decidedBy: approval.decidedBy.slice(0, 500),
      ...(argumentsHash === undefined ? {} : { argumentsHash }),
    };
    this.add(sessionId, relayed);
    this.relay.publishApproval(sessionId, relayed);
  }

  /** An approval another replica told of (its signature checked). */
  add(sessionId: string, approval: RelayedApproval): void {
    let known = this.sessions.get(sessionId);
    if (known === undefined) {
      this.sessions.set(sessionId, (known = new Map()));
      if (this.sessions.size > MAX_SHARED_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
    }
    known.set(approvalKey(approval.toolName, approval.fingerprint, approval.argumentsHash), { scope: approval.scope, decidedBy: approval.decidedBy });
    if (known.size > MAX_SHARED_PER_SESSION) known.delete(known.keys().next().value as string);
  }
}

function approvalKey(toolName: string, fingerprint: string, argumentsHash: string | undefined): string {
  return `${toolName}\0${fingerprint}\0${argumentsHash ?? '*'}`;
}

/** SHA-256 (base64url) of the canonical JSON of a call's arguments; `undefined` for what has no JSON form. */
function argumentsHashOf(input: unknown): string | undefined {
  try {
    return createHash('sha256').update(canonicalJson(input), 'utf8').digest('base64url');
  } catch {
    return undefined;
  }
}

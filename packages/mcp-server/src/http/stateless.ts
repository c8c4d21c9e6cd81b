import type { ServerResponse } from 'node:http';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * MCP 2026-07-28 (the protocol without sessions): each request carries the
 * client's protocol version, introduction and capabilities in its `_meta`,
 * `server/discover` replaces `initialize`, and every result says it is
 * complete. These are the pieces the HTTP endpoint needs to answer such a
 * request on any replica, with no session.
 */

/** The stateless protocol versions this server speaks. */
export const STATELESS_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];

const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';
const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
/** Stamps each notification of a `subscriptions/listen` stream (and its closing result) with the listen request's id. */
export const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';
/** MCP's "unsupported protocol version" error (2026-07-28). */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;
/** The first protocol version without sessions: a dated version from this one on belongs to that era. */
const FIRST_STATELESS_VERSION = '2026-07-28';
/** Results a 2026-07-28 client may cache: they must say for how long (here: not at all) and for whom. */
const CACHEABLE = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read']);

/** A request (or notification) of the stateless era, as the endpoint received it. */
export interface StatelessMessage {
  readonly id: RequestId | undefined;
  readonly method: string;
  readonly params: Record<string, unknown>;
  readonly protocolVersion: string;
  readonly clientInfo: { readonly name: string; readonly version: string } | undefined;
  /** What the client declared, or `undefined` when its envelope lacks them (an invalid request). */
  readonly capabilities: Record<string, unknown> | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The body as a message of the stateless era: a single JSON-RPC request or
 * notification whose `_meta` names a protocol version from 2026-07-28 on.
 * `undefined` for anything else (a 2025-era message, a batch, not JSON-RPC).
 */
export function statelessMessageOf(body: unknown): StatelessMessage | undefined {
  if (!isRecord(body) || body['jsonrpc'] !== '2.0' || typeof body['method'] !== 'string') return undefined;
  const params = isRecord(body['params']) ? body['params'] : {};
  const meta = params['_meta'];
  if (!isRecord(meta)) return undefined;
  const version = meta[PROTOCOL_VERSION_KEY];
  if (typeof version !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(version) || version < FIRST_STATELESS_VERSION) return undefined;
  const id = body['id'];
  const info = meta[CLIENT_INFO_KEY];
  const capabilities = meta[CLIENT_CAPABILITIES_KEY];
  return {
    id: typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : undefined,
    method: body['method'].slice(0, 200),
    params,
    protocolVersion: version,
    clientInfo:
      isRecord(info) && typeof info['name'] === 'string'
        ? { name: info['name'].slice(0, 200), version: typeof info['version'] === 'string' ? info['version'].slice(0, 100) : '' }
        : undefined,
    capabilities: isRecord(capabilities) ? capabilities : undefined,
  };
}

/** The JSON-RPC error a stateless request gets when its version is not one this server speaks, or its envelope is incomplete; `undefined` when it is served. */
export function statelessRefusal(message: StatelessMessage): { code: number; message: string; data?: unknown } | undefined {
  if (!STATELESS_PROTOCOL_VERSIONS.includes(message.protocolVersion)) {
    return {
      code: UNSUPPORTED_PROTOCOL_VERSION,
      message: `Unsupported protocol version ${message.protocolVersion}: this server speaks ${STATELESS_PROTOCOL_VERSIONS.join(', ')} without sessions, and 2025-11-25, 2025-06-18 and earlier with initialize.`,
      data: { supported: [...STATELESS_PROTOCOL_VERSIONS], requested: message.protocolVersion },
    };
  }
  if (message.capabilities === undefined)
    return {
      code: -32602,
      message: `Invalid params: the request's _meta lacks ${CLIENT_CAPABILITIES_KEY}, which protocol ${message.protocolVersion} requires.`,
    };
  return undefined;
}

/**
 * What the plan behind a stateless request knows of its client: its
 * capabilities without those that would have the server ask it something
 * (sampling, elicitation, roots) — a request without a session has no
 * channel for a question, so an approval is then decided as for a client
 * that cannot be asked.
 */
export function askFreeCapabilities(capabilities: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(capabilities)) if (name !== 'sampling' && name !== 'elicitation' && name !== 'roots') kept[name] = value;
  return kept;
}

/** The server's answer to `server/discover`. */
export function discoverResult(
  offer: { readonly capabilities: Record<string, unknown>; readonly instructions: string | undefined },
  serverInfo: { readonly name: string; readonly version: string },
): Record<string, unknown> {
  // Change notifications and resource updates reach a 2026-07-28 client through subscriptions/listen: `listChanged` and `subscribe` say what it may listen to.
  const capabilities: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(offer.capabilities)) {
    if (name === 'tasks') continue;
    capabilities[name] = value;
  }
  return encodeResult(
    'server/discover',
    {
      supportedVersions: [...STATELESS_PROTOCOL_VERSIONS],
      capabilities,
      ...(offer.instructions === undefined ? {} : { instructions: offer.instructions }),
      ttlMs: 0,
      cacheScope: 'private',
    },
    serverInfo,
  );
}

/** A 2025-era result as the 2026-07-28 client expects it: `resultType`, cache fields where they are required, the server's identity in `_meta`. */
export function encodeResult(
  method: string,
  result: Record<string, unknown>,
  serverInfo: { readonly name: string; readonly version: string },
): Record<string, unknown> {
  const encoded: Record<string, unknown> = { ...result, resultType: 'complete' };
  if (CACHEABLE.has(method)) {
    if (!Number.isSafeInteger(encoded['ttlMs']) || (encoded['ttlMs'] as number) < 0) encoded['ttlMs'] = 0;
    if (encoded['cacheScope'] !== 'public' && encoded['cacheScope'] !== 'private') encoded['cacheScope'] = 'private';
  }
  if (method === 'tools/list' && Array.isArray(encoded['tools'])) {
    // Tasks are an extension in 2026-07-28: a tool's `execution` is not part of its definition there.
    encoded['tools'] = (encoded['tools'] as unknown[]).map((tool) => {
      if (!isRecord(tool) || !('execution' in tool)) return tool;
      const { execution: _execution, ...rest } = tool;
      return rest;
    });
  }
  const meta = isRecord(result['_meta']) ? result['_meta'] : {};
  encoded['_meta'] = { ...meta, [SERVER_INFO_KEY]: { name: serverInfo.name, version: serverInfo.version } };
  return encoded;
}

/** A 2025-era error code as 2026-07-28 has it (resource not found is invalid params there). */
export function encodeErrorCode(code: number): number {
  return code === -32002 ? -32602 : code;
}

/** A notification the server sends (no id). */
export type OutgoingNotification = { readonly jsonrpc: '2.0'; readonly method: string; readonly params?: Record<string, unknown> };

/**
 * A transport for exactly one request of the client: the request is
 * delivered to the server, its response is `answer`; each notification the
 * server sends while it runs goes to `onNotification` (dropped without one),
 * and a question it asks the client is answered at once with an error (no
 * session, no channel back). `ask` delivers a request of the endpoint's own
 * (a listen stream's `tools/list`, `resources/subscribe`), whose response
 * never reaches the client.
 */
export class OneRequestTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  readonly answer: Promise<JSONRPCMessage | undefined>;
  /** Resolves when the transport is closed (the session ended: the request answered, the gateway stopping). */
  readonly closedPromise: Promise<void>;
  private settle!: (message: JSONRPCMessage | undefined) => void;
  private markClosed!: () => void;
  private closed = false;
  private readonly asked = new Map<RequestId, (message: JSONRPCMessage | undefined) => void>();
  private asks = 0;

  constructor(
    private readonly requestId: RequestId,
    private readonly onNotification?: (notification: OutgoingNotification) => void,
  ) {
    this.answer = new Promise((resolve) => (this.settle = resolve));
    this.closedPromise = new Promise((resolve) => (this.markClosed = resolve));
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  /** Delivers a request of the endpoint's own to the server; resolves with its response (`undefined` once closed). */
  ask(method: string, params: Record<string, unknown>): Promise<JSONRPCMessage | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    const id = `ca-endpoint-${++this.asks}`;
    const answered = new Promise<JSONRPCMessage | undefined>((resolve) => this.asked.set(id, resolve));
    this.onmessage?.({ jsonrpc: '2.0', id, method, params });
    return answered;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    const outgoing = message as { id?: RequestId; method?: string; result?: unknown; error?: unknown };
    if (outgoing.id !== undefined && outgoing.method === undefined) {
      if (outgoing.id === this.requestId) this.settle(message);
      const asker = this.asked.get(outgoing.id);
      if (asker !== undefined) {
        this.asked.delete(outgoing.id);
        asker(message);
      }
      return;
    }
    if (outgoing.id === undefined && outgoing.method !== undefined) {
      this.onNotification?.(message as OutgoingNotification);
      return;
    }
    if (outgoing.id !== undefined && outgoing.method !== undefined) {
      // A question of the server (sampling, elicitation, roots): nobody to ask.
      const id = outgoing.id;
      queueMicrotask(() =>
        this.onmessage?.({
          jsonrpc: '2.0',
          id,
          error: { code: -32601, message: `A ${FIRST_STATELESS_VERSION} request has no session to ask its client ${outgoing.method} through.` },
        }),
      );
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.settle(undefined);
    for (const asker of this.asked.values()) asker(undefined);
    this.asked.clear();
    this.markClosed();
    this.onclose?.();
  }
}

/**
 * A response written as a stream of server-sent events (what a Streamable
 * HTTP client reads when the answer is `text/event-stream`): opened at the
 * first message, each JSON-RPC message one `message` event.
 */
export class EventStream {
  private opened = false;

  constructor(private readonly response: ServerResponse) {}

  /** True once the stream's headers are sent. */
  get isOpen(): boolean {
    return this.opened;
  }

  /** True when the client can no longer be written to. */
  get gone(): boolean {
    return this.response.destroyed || this.response.writableEnded;
  }

  open(): void {
    if (this.opened || this.response.headersSent) return;
    this.opened = true;
    this.response.statusCode = 200;
    this.response.setHeader('content-type', 'text/event-stream');
    this.response.setHeader('cache-control', 'no-cache, no-transform');
    // Proxies that buffer responses (nginx) would hold a notification back until the stream ends.
    this.response.setHeader('x-accel-buffering', 'no');
    this.response.flushHeaders();
  }

  send(message: Record<string, unknown>): void {
    if (this.gone) return;
    this.open();
    this.response.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /** A comment line: keeps an idle stream open through proxies that cut silent connections. */
  keepAlive(): void {
    if (!this.gone && this.opened) this.response.write(': keep-alive\n\n');
  }

  end(): void {
    if (!this.gone) this.response.end();
  }
}

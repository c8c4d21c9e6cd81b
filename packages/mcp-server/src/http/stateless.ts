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
  // Change notifications and subscriptions reach a 2026-07-28 client only through subscriptions/listen, which this server does not offer.
  const capabilities: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(offer.capabilities)) {
    if (name === 'tasks') continue;
    capabilities[name] = isRecord(value) ? Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'listChanged' && key !== 'subscribe')) : value;
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

/**
 * A transport for exactly one request: the request is delivered to the
 * server, its response is `answer`; notifications the server sends while it
 * runs are dropped, and a question it asks the client is answered at once
 * with an error (no session, no channel back).
 */
export class OneRequestTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  readonly answer: Promise<JSONRPCMessage | undefined>;
  private settle!: (message: JSONRPCMessage | undefined) => void;
  private closed = false;

  constructor(private readonly requestId: RequestId) {
    this.answer = new Promise((resolve) => (this.settle = resolve));
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    const outgoing = message as { id?: RequestId; method?: string; result?: unknown; error?: unknown };
    if (outgoing.id !== undefined && outgoing.method === undefined) {
      if (outgoing.id === this.requestId) this.settle(message);
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
    this.onclose?.();
  }
}

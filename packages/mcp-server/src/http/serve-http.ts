import { randomBytes, randomUUID } from 'node:crypto';
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeValue, messageOf } from '@ca/domain';
import type { PlanRegistry, RuntimeLogger } from '@ca/tool-lifecycle';
import { createCancelMessage, silentLogger } from '@ca/tool-lifecycle';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthMetadataRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { McpHttpAuth } from '../auth/resource-server-auth';
import { McpGatewayError, invalidArgument } from '../errors/mcp-gateway-error';
import type { McpGateway, McpGatewaySession } from '../gateway/mcp-gateway';
import { RequestGuards, isLoopbackHost } from './request-guards';
import { SessionLimits } from './session-limits';
import { SessionSeal, type SealedSession } from './session-seal';
import { serveListen, subscriptionFilterOf } from './stateless-listen';
import { StatelessInputs, asksByForm } from './stateless-input';
import { derivedKey } from './fleet-keys';
import { FleetRelay, FleetSessionApprovals, isFleetBroadcast, isRelayed, notificationKey, type RelayedNotification } from './fleet-relay';
import {
  EventStream,
  OneRequestTransport,
  askFreeCapabilities,
  discoverResult,
  encodeErrorCode,
  encodeResult,
  statelessMessageOf,
  statelessRefusal,
  type StatelessMessage,
} from './stateless';

/** Options of {@link serveHttp}. */
export interface ServeHttpOptions {
  /** The address to listen on; default `127.0.0.1` (this machine only). Another needs `allowedHosts`, and `auth` or `allowUnauthenticated`. */
  readonly host?: string;
  /** The port; default 0 (a free one: read `url`). */
  readonly port?: number;
  /** The MCP endpoint's path; default `/mcp`. */
  readonly path?: string;
  /** Host names clients use besides the loopback names (`localhost`, `127.0.0.1`, `[::1]`); a request with another `Host` is refused (403). */
  readonly allowedHosts?: readonly string[];
  /** Web origins (`https://app.example.com`) allowed besides the server's own; a browser's request from another is refused (403). */
  readonly allowedOrigins?: readonly string[];
  /** OAuth 2.1 resource-server mode: every request needs a bearer token the verifier accepts (`createResourceServerAuth`). */
  readonly auth?: McpHttpAuth;
  /** Serve beyond loopback without `auth`: anyone who reaches the address may run the tools. Default false. */
  readonly allowUnauthenticated?: boolean;
  /** The public URL of the endpoint, when clients reach it through a proxy (named in the protected-resource metadata); default the address it listens on. */
  readonly publicUrl?: string;
  /**
   * Most sessions at once (default 32). When full, a new client's session
   * takes the place of the least recently used idle one (no request in
   * progress, no open stream), which ends (its client's next request gets
   * 404, MCP's "start a new session"); only when every session is busy is
   * the new one refused (503, `Retry-After`).
   */
  readonly maxSessions?: number;
  /**
   * Most sessions one client holds (default 16): its own least recently used
   * idle session makes room for its next, else 429. A client is the token's
   * client and subject when signed in, else the address it connects from;
   * programs on this machine (loopback addresses, unsigned) count only
   * against `maxSessions`. `clientOf` tells clients apart otherwise.
   */
  readonly maxSessionsPerClient?: number;
  /**
   * Who a request comes from, for `maxSessionsPerClient` and
   * `requestsPerMinute` (behind a proxy you trust: its `X-Forwarded-For`);
   * `undefined` for the default.
   */
  readonly clientOf?: (request: IncomingMessage, auth: AuthInfo | undefined) => string | undefined;
  /** Most requests one client makes in a minute, over all its sessions (default: no cap); beyond, 429 with `Retry-After`. */
  readonly requestsPerMinute?: number;
  /** A session with no request and no open stream for this long is ended, and its plan with it (default 1,800,000 ms: 30 minutes). */
  readonly sessionIdleTimeoutMs?: number;
  /** Largest request body, in bytes (default 4 MiB). */
  readonly maxRequestBytes?: number;
  /** Where it logs refused requests and ended sessions (default: nowhere). */
  readonly logger?: RuntimeLogger;
  /**
   * One replica of a fleet behind a load balancer without affinity: session
   * ids are sealed (AES-256-GCM) under `key`, which every replica shares,
   * and carry what another replica needs to serve the session (its id, the
   * client's introduction and capabilities, the token's owner) — any replica
   * serves any request. `replicaId` names this one in logs and in the
   * `X-Agents-Replica` response header.
   */
  readonly fleet?: {
    readonly key: Uint8Array | string;
    readonly replicaId?: string;
    /**
     * The plan registry every replica announces its plans in (the runtime's):
     * a session deleted on one replica ends its plans on the others. When it
     * can broadcast (the Redis registry of `@ca/plan-registry-redis` can), a
     * session's change notifications (`list_changed`, resource updates) made
     * on a replica that does not hold the client's event stream are passed
     * to the one that does.
     */
    readonly registry?: PlanRegistry;
  };
}

/** A running Streamable HTTP endpoint of a gateway. */
export interface McpHttpServer {
  /** The endpoint's URL (`http://127.0.0.1:<port>/mcp`; the `publicUrl` when one was given). */
  readonly url: URL;
  /** Where it listens. */
  readonly address: { readonly host: string; readonly port: number };
  /** How many sessions are open. */
  readonly sessionCount: number;
  /** How many of them are busy: a request in progress or an event stream open (the others are idle, and make room when the server is full). */
  readonly busySessionCount: number;
  /** Stops listening and ends every session (each plan ended). Idempotent. */
  close(): Promise<void>;
}

interface SessionEntry {
  /** The session's own id (its plan is `mcp-<sid>`); the `Mcp-Session-Id` is this, or sealed around it in a fleet. */
  readonly sid: string;
  readonly transport: StreamableHTTPServerTransport;
  session: McpGatewaySession | undefined;
  /** Who opened it: the token's client and subject, when signed in. */
  readonly owner: string | undefined;
  /** Whose it is for the limits: the owner, else the address it came from. */
  readonly client: string;
  /** Requests in progress and open streams. */
  active: number;
  lastSeen: number;
  /** Event streams (`GET`) of the client open on this replica. */
  streams: number;
  /** Sends on the session's transport as the SDK would (a notification with no stream to go on is dropped). */
  deliver?: (message: RelayedNotification) => Promise<void>;
  /** When each change notification was last sent on this replica: the same change relayed from another replica just after is not sent twice. */
  readonly recent: Map<string, number>;
}

const DEFAULT_MAX_SESSIONS = 32;
const DEFAULT_MAX_SESSIONS_PER_CLIENT = 16;
const DEFAULT_IDLE_MS = 30 * 60_000;
const DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** How long an idle keep-alive connection stays open: longer than the 60 s of common load balancers. */
const HTTP_KEEP_ALIVE_MS = 65_000;
const HTTP_BACKLOG = 4_096;
/** The same change relayed from another replica within this long of one sent here is the same change: not sent twice. */
const RELAY_DEDUPE_MS = 1_000;
/** Stateless (2026-07-28) requests in progress at once, per allowed session: as many as one session's calls. */
const STATELESS_PER_SESSION = 16;

/** The progress token of a request's `_meta`, when it has one MCP allows (a string or a number). */
function progressTokenOf(params: Record<string, unknown>): string | number | undefined {
  const meta = params['_meta'];
  const token = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)['progressToken'] : undefined;
  if (typeof token === 'string' && token.length > 0 && token.length <= 1_000) return token;
  return typeof token === 'number' && Number.isFinite(token) ? token : undefined;
}

function rpcError(response: Response | ServerResponse, status: number, code: number, message: string): void {
  const res = response as ServerResponse;
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function rpcRefusal(response: Response, status: number, error: McpGatewayError, retryAfterMs: number): void {
  if (response.headersSent) return;
  response.setHeader('retry-after', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
  response.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message: error.message, data: { code: error.code, retryAfterMs } }, id: null });
}

/** Whom a request counts against: the token's client and subject, else the address it comes from; loopback is the server's own machine. */
function defaultClientOf(request: IncomingMessage, auth: AuthInfo | undefined): string {
  const owner = ownerOf(auth);
  if (owner !== undefined) return `token ${owner}`;
  const address = request.socket.remoteAddress ?? 'unknown';
  return isLoopbackAddress(address) ? LOOPBACK_CLIENT : `address ${address}`;
}

const LOOPBACK_CLIENT = 'loopback';

function isLoopbackAddress(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

function ownerOf(auth: AuthInfo | undefined): string | undefined {
  if (auth === undefined) return undefined;
  const subject = auth.extra?.['subject'];
  return `${auth.clientId}\u0000${typeof subject === 'string' ? subject : ''}`;
}

/**
 * Serves the gateway over Streamable HTTP: one MCP session per client
 * (`Mcp-Session-Id`), each its own plan. Loopback only by default; every
 * request's `Host` (and a browser's `Origin`) is checked against the names
 * the server answers to (DNS rebinding); with `auth`, every request needs a
 * valid bearer token (the SDK's `requireBearerAuth`), 401s name the RFC 9728
 * metadata (served at `/.well-known/oauth-protected-resource<path>`), and a
 * session can only be used with tokens of the client that opened it. A
 * session ends — its plan with it, each tool deactivated once — when the
 * client deletes it, when it was idle for `sessionIdleTimeoutMs`, when its
 * plan is cancelled, and when the server closes.
 * @throws McpGatewayError `GATEWAY_HTTP_UNSAFE` for an address beyond loopback without allowed host names or sign-in;
 *   `GATEWAY_INVALID_ARGUMENT` for an option it cannot use.
 */
export async function serveHttp(gateway: McpGateway, options: ServeHttpOptions = {}): Promise<McpHttpServer> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const port = options.port ?? 0;
  const logger = options.logger ?? silentLogger;
  if (typeof host !== 'string' || host.length === 0) throw invalidArgument('host', 'an address to listen on', describeValue(host));
  if (!Number.isSafeInteger(port) || port < 0 || port > 65_535) throw invalidArgument('port', 'a port number (0 for a free one)', describeValue(port));
  if (typeof path !== 'string' || !path.startsWith('/')) throw invalidArgument('path', "a path starting with '/'", describeValue(path));
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const idleMs = options.sessionIdleTimeoutMs ?? DEFAULT_IDLE_MS;
  const clientOf = (request: IncomingMessage, auth: AuthInfo | undefined): string => {
    const chosen = options.clientOf?.(request, auth);
    return typeof chosen === 'string' && chosen.length > 0 ? `chosen ${chosen.slice(0, 500)}` : defaultClientOf(request, auth);
  };
  const limits = new SessionLimits<string>({
    maxSessions,
    maxSessionsPerClient:
      options.maxSessionsPerClient ??
      (Number.isSafeInteger(maxSessions) ? Math.min(maxSessions, DEFAULT_MAX_SESSIONS_PER_CLIENT) : DEFAULT_MAX_SESSIONS_PER_CLIENT),
    requestsPerMinute: options.requestsPerMinute,
    exempt: (client) => client === LOOPBACK_CLIENT,
  });
  if (!Number.isSafeInteger(idleMs) || idleMs < 1) throw invalidArgument('sessionIdleTimeoutMs', 'a whole number of ms ≥ 1', describeValue(idleMs));
  const allowedHosts = options.allowedHosts ?? [];
  if (!isLoopbackHost(host)) {
    if (allowedHosts.length === 0) {
      throw new McpGatewayError({
        problem: {
          kind: 'http-unsafe',
          host,
          reason: 'it is reachable from other machines and no allowed host names are set, so DNS rebinding could not be told apart',
          advice: 'Name the host names clients use (allowedHosts, --allow-host), or listen on 127.0.0.1.',
        },
      });
    }
    if (options.auth === undefined && options.allowUnauthenticated !== true) {
      throw new McpGatewayError({
        problem: {
          kind: 'http-unsafe',
          host,
          reason: 'it is reachable from other machines and no OAuth sign-in is configured, so anyone who reaches it could run the tools',
          advice:
            'Configure OAuth (auth, the configuration\'s "serve.http.oauth"), listen on 127.0.0.1, or accept it explicitly (allowUnauthenticated, --allow-unauthenticated).',
        },
      });
    }
  }
  // The fleet's key as 32 bytes (however it is written): it seals session ids, and the keys below are derived from it.
  const fleetKey = options.fleet === undefined ? undefined : SessionSeal.keyOf(options.fleet.key);
  const seal = fleetKey === undefined ? undefined : new SessionSeal(fleetKey);
  const replicaId = options.fleet?.replicaId;
  // The name a session's plan on this replica ends with, when another replica opened the session.
  const replicaTag = (replicaId ?? randomUUID().slice(0, 8)).slice(0, 50);
  const fleetRegistry = options.fleet?.registry;
  // Signs a 2026-07-28 request's state between its rounds (input_required): the fleet's key, so that any replica takes the retry.
  const inputKey = fleetKey === undefined ? randomBytes(32) : derivedKey(fleetKey, 'ca.mcp.input-required/1');
  if (replicaId !== undefined && (typeof replicaId !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(replicaId)))
    throw invalidArgument('fleet.replicaId', 'a name of 1–64 letters, digits, dots, dashes or underscores', describeValue(replicaId));
  const guards = new RequestGuards(allowedHosts, options.allowedOrigins ?? []);
  const sessions = new Map<string, SessionEntry>();
  let opening = 0;
  let listeningPort = port;
  let closing: Promise<void> | undefined;

  const app = express();
  app.disable('x-powered-by');
  if (replicaId !== undefined)
    app.use((_request: Request, response: Response, next: NextFunction) => {
      response.setHeader('x-agents-replica', replicaId);
      next();
    });
  app.use((request: Request, response: Response, next: NextFunction) => {
    const refusal = guards.refusal(request, listeningPort, 'http');
    if (refusal === undefined) return next();
    logger.warn(`MCP over HTTP: refused a request: ${refusal}.`, {});
    rpcError(response, 403, -32000, `Forbidden: ${refusal}.`);
  });

  const bearer: express.RequestHandler[] = [];
  const mountAuth = (url: URL): void => {
    const auth = options.auth;
    if (auth === undefined) return;
    app.use(
      mcpAuthMetadataRouter({
        oauthMetadata: auth.oauthMetadata,
        resourceServerUrl: url,
        ...(auth.scopesSupported === undefined && auth.requiredScopes === undefined
          ? {}
          : { scopesSupported: [...(auth.scopesSupported ?? auth.requiredScopes ?? [])] }),
        ...(auth.resourceName === undefined ? {} : { resourceName: auth.resourceName }),
      }),
    );
    bearer.push(
      requireBearerAuth({
        verifier: auth.verifier,
        requiredScopes: [...(auth.requiredScopes ?? [])],
        resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(url),
      }),
    );
  };

  // Each refusal is logged once while it lasts: the first time, not for every request refused after it.
  const refusing = new Set<string>();
  const refuseOnce = (what: string, text: string): void => {
    if (refusing.has(what)) return;
    if (refusing.size > 10_000) refusing.clear();
    refusing.add(what);
    logger.warn(text, {});
  };

  const handle = async (request: Request, response: Response): Promise<void> => {
    const sessionId = request.header('mcp-session-id');
    const auth = (request as Request & { auth?: AuthInfo }).auth;
    const client = clientOf(request as unknown as IncomingMessage, auth);
    const wait = limits.throttle(client);
    if (wait !== undefined) {
      const error = new McpGatewayError({ problem: { kind: 'rate-limit', limit: limits.settings.requestsPerMinute ?? 0, retryAfterMs: wait } });
      refuseOnce(
        `rate ${client}`,
        `MCP over HTTP: a client (${ownerOf(auth) === undefined ? client : 'signed in'}) passed its ${limits.settings.requestsPerMinute} request(s) a minute; its requests are refused (429) until it slows down.`,
      );
      return rpcRefusal(response, 429, error, wait);
    }
    refusing.delete(`rate ${client}`);
    if (sessionId !== undefined) {
      let entry = sessions.get(sessionId);
      if (entry === undefined && seal !== undefined) {
        // A session another replica opened (or this one, before it restarted): served here from what its id carries.
        const sealed = seal.open(sessionId);
        if (sealed !== undefined) {
          if (sealed.owner !== ownerOf(auth)) return rpcError(response, 403, -32000, 'Forbidden: this session belongs to another client.');
          if (request.method === 'DELETE') {
            await endElsewhere(sealed.sid, undefined);
            response.status(200).end();
            return;
          }
          if (!admit(client, response)) return;
          entry = await resuming(sessionId, () => open(sessionId, sealed.sid, client, auth, sealed));
        }
      }
      if (entry === undefined) return rpcError(response, 404, -32001, 'Session not found: it ended or never existed. Start a new session (initialize).');
      if (entry.owner !== ownerOf(auth)) return rpcError(response, 403, -32000, 'Forbidden: this session belongs to another client.');
      const held = entry;
      held.active++;
      held.lastSeen = Date.now();
      const stream = request.method === 'GET';
      if (stream) held.streams++;
      response.once('close', () => {
        held.active--;
        if (stream) held.streams--;
        held.lastSeen = Date.now();
      });
      await held.transport.handleRequest(request as unknown as IncomingMessage & { auth?: AuthInfo }, response, request.body);
      return;
    }
    if (request.method === 'POST') {
      const stateless = statelessMessageOf(request.body);
      if (stateless !== undefined) return serveStateless(stateless, request, response, auth);
    }
    if (request.method !== 'POST' || !isInitializeRequest(request.body)) {
      return rpcError(response, 400, -32000, 'Bad Request: no Mcp-Session-Id header; the first request of a session is initialize.');
    }
    if (!admit(client, response)) return;
    const sid = randomUUID();
    const params = (
      request.body as { params?: { clientInfo?: { name: string; version: string }; capabilities?: Record<string, unknown>; protocolVersion?: string } }
    ).params;
    const id =
      seal === undefined
        ? sid
        : seal.seal({
            sid,
            ...(ownerOf(auth) === undefined ? {} : { owner: ownerOf(auth) }),
            ...(params?.clientInfo === undefined
              ? {}
              : { clientInfo: { name: String(params.clientInfo.name).slice(0, 200), version: String(params.clientInfo.version).slice(0, 100) } }),
            ...(params?.capabilities === undefined ? {} : { capabilities: params.capabilities }),
            ...(typeof params?.protocolVersion === 'string' ? { protocolVersion: params.protocolVersion.slice(0, 40) } : {}),
            issuedAt: Date.now(),
          });
    const entry = await open(id, sid, client, auth, undefined);
    response.once('close', () => {
      entry.active--;
      entry.lastSeen = Date.now();
    });
    await entry.transport.handleRequest(request as unknown as IncomingMessage & { auth?: AuthInfo }, response, request.body);
    // An initialize the transport refused leaves no session to keep.
    if (!sessions.has(id)) void entry.session?.close('its initialize was refused');
  };

  /**
   * A request of MCP 2026-07-28: no session, so any replica answers it. It
   * runs in a plan of its own (`mcp-<random>`), started for it and ended
   * when it is answered; `server/discover` starts none. With a
   * `progressToken`, the answer is a stream of events: the call's progress,
   * then its result. `subscriptions/listen` keeps its stream (and a session
   * behind it) open while the client listens. Notifications are accepted and
   * dropped (a listen stream ends when its client closes it).
   */
  let statelessRunning = 0;
  const listening = new Set<() => Promise<void>>();
  let listens = 0;
  const serveStateless = async (message: StatelessMessage, request: Request, response: Response, auth: AuthInfo | undefined): Promise<void> => {
    if (message.id === undefined) {
      response.status(202).end();
      return;
    }
    const stream = new EventStream(response);
    const reply = (body: Record<string, unknown>): void => {
      if (stream.isOpen) {
        stream.send({ jsonrpc: '2.0', id: message.id, ...body });
        stream.end();
        return;
      }
      if (response.headersSent) return;
      response.status(200).json({ jsonrpc: '2.0', id: message.id, ...body });
    };
    const refusal = statelessRefusal(message);
    if (refusal !== undefined) return reply({ error: refusal });
    if (message.method === 'subscriptions/listen') {
      const filter = subscriptionFilterOf(message.params);
      if (typeof filter === 'string') return reply({ error: { code: -32602, message: `Invalid params: ${filter}.` } });
      // Each stream holds a session and its plan while the client listens: as many as the sessions a replica keeps.
      if (Number.isSafeInteger(maxSessions) && listens >= maxSessions) {
        const error = new McpGatewayError({ problem: { kind: 'session-limit', limit: maxSessions, scope: 'replica' } });
        refuseOnce('listen', `MCP over HTTP: refused a subscriptions/listen stream: ${maxSessions} are open, the limit.`);
        return rpcRefusal(response, 503, error, 5_000);
      }
      refusing.delete('listen');
      // Counted from admission (not from the acknowledgement): a burst of listens cannot pass the limit.
      listens++;
      try {
        return await serveListen(message, filter, response, {
          gateway,
          logger,
          auth,
          track: (end) => {
            listening.add(end);
            return () => listening.delete(end);
          },
        });
      } finally {
        listens--;
      }
    }
    const cap = Number.isSafeInteger(maxSessions) ? maxSessions * STATELESS_PER_SESSION : Number.MAX_SAFE_INTEGER;
    if (statelessRunning >= cap) {
      const error = new McpGatewayError({ problem: { kind: 'session-limit', limit: cap, scope: 'replica' } });
      refuseOnce('stateless', `MCP over HTTP: refused a ${message.protocolVersion} request: ${cap} are in progress, the limit.`);
      return rpcRefusal(response, 503, error, 1_000);
    }
    refusing.delete('stateless');
    statelessRunning++;
    // The call's progress, when the client asked for it (a progress token), goes on the answer's stream before the result.
    const progressToken = progressTokenOf(message.params);
    const transport = new OneRequestTransport(
      message.id as string | number,
      progressToken === undefined
        ? undefined
        : (notification) => {
            if (notification.method === 'notifications/progress' && notification.params?.['progressToken'] === progressToken) stream.send({ ...notification });
          },
    );
    let session: McpGatewaySession | undefined;
    const answered = new Promise<void>((resolve) => response.once('close', resolve));
    // A client that takes form elicitation is asked a question through the answer (input_required), and answers in its retry.
    // Not for a program (code mode): its retry would run the program's earlier calls again, in a new plan; its approvals are decided as for a client that cannot be asked.
    const program = message.method === 'tools/call' && message.params['name'] === gateway.programToolName;
    const inputs = asksByForm(message.capabilities) && !program ? StatelessInputs.of(inputKey, message.params) : undefined;
    try {
      session = await gateway.connect(transport, {
        transport: 'http',
        ...(auth === undefined ? {} : { authInfo: auth }),
        ...(inputs === undefined ? {} : { inputs }),
        resumed: {
          ...(message.clientInfo === undefined ? {} : { clientInfo: message.clientInfo }),
          capabilities: askFreeCapabilities(message.capabilities ?? {}),
          protocolVersion: message.protocolVersion,
        },
      });
      if (message.method === 'server/discover') return reply({ result: discoverResult(session.offer, session.offer.serverInfo) });
      // The client going away before the answer ends the request's plan, which stops its call.
      void answered.then(() => session?.close('its client went away before the answer'));
      const { _meta: _envelope, inputResponses: _responses, requestState: _state, ...params } = message.params;
      transport.onmessage?.(
        {
          jsonrpc: '2.0',
          id: message.id as string | number,
          method: message.method,
          params: progressToken === undefined ? params : { ...params, _meta: { progressToken } },
        },
        auth === undefined ? undefined : { authInfo: auth },
      );
      const answer = (await transport.answer) as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } } | undefined;
      // The plan asked the client something: the answer is the question; the retry carries the client's answer.
      if (inputs?.pending === true) return reply({ result: inputs.result(session.offer.serverInfo) });
      if (answer === undefined) return reply({ error: { code: -32603, message: 'Internal error: the request ended without an answer.' } });
      if (answer.error !== undefined) return reply({ error: { ...answer.error, code: encodeErrorCode(answer.error.code) } });
      reply({ result: encodeResult(message.method, answer.result ?? {}, session.offer.serverInfo) });
    } finally {
      statelessRunning--;
      await session?.close('its request was answered');
    }
  };

  /** Whether a new session (or one resumed here) may open; when not, the refusal is sent. Makes room by ending an idle session when it must. */
  const admit = (client: string, response: Response): boolean => {
    const admission = limits.admit(client, sessions, opening);
    if (!admission.admit) {
      const error = new McpGatewayError({ problem: { kind: 'session-limit', limit: admission.max, scope: admission.limit } });
      refuseOnce(
        `full ${admission.limit === 'client' ? client : ''}`,
        admission.limit === 'client'
          ? `MCP over HTTP: refused a new session: a client holds ${admission.max} session(s), its limit, each busy.`
          : `MCP over HTTP: refused a new session: ${admission.max} session(s) are open, the limit, each busy.`,
      );
      rpcRefusal(response, admission.limit === 'client' ? 429 : 503, error, 1_000);
      return false;
    }
    refusing.delete(`full ${client}`);
    refusing.delete('full ');
    if (admission.evict !== undefined) {
      const evicted = sessions.get(admission.evict.key);
      if (evicted !== undefined) {
        // Gone from the table now, so the room is there at once; its plan ends in the background.
        sessions.delete(admission.evict.key);
        logger.info(`MCP over HTTP: ended idle session ${evicted.sid} (least recently used): ${admission.evict.reason}.`, {});
        void evicted.session?.close(`evicted: ${admission.evict.reason}`);
      }
    }
    return true;
  };

  /** Ends the plans other replicas hold for a session its client deleted (through the registry they share); a failure is logged, never thrown. */
  const endElsewhere = async (sid: string, localPlan: string | undefined): Promise<void> => {
    if (fleetRegistry === undefined) return;
    try {
      const plans = (await fleetRegistry.list()).filter((plan) => plan.labels?.['session'] === sid && plan.planId !== localPlan);
      await Promise.all(
        plans.map((plan) =>
          fleetRegistry
            .send(createCancelMessage(plan.planId, 'the client deleted its MCP session on another replica', replicaId ?? 'mcp-gateway'))
            .catch(() => undefined),
        ),
      );
    } catch (error) {
      logger.warn(`MCP over HTTP: could not end the plans of session ${sid} on the other replicas: ${messageOf(error)}`, {});
    }
  };

  /** One rebuild of a resumed session at a time: requests that arrive together share it. */
  const rebuilding = new Map<string, Promise<SessionEntry>>();
  const resuming = (id: string, build: () => Promise<SessionEntry>): Promise<SessionEntry> => {
    let pending = rebuilding.get(id);
    if (pending === undefined) {
      pending = build().finally(() => rebuilding.delete(id));
      rebuilding.set(id, pending);
    }
    return pending;
  };

  /** A session's transport and gateway session: a new one (its initialize follows), or one resumed from its sealed id. */
  const open = async (id: string, sid: string, client: string, auth: AuthInfo | undefined, resumed: SealedSession | undefined): Promise<SessionEntry> => {
    const entry: SessionEntry = {
      sid,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => id,
        onsessioninitialized: () => {
          sessions.set(id, entry);
        },
        onsessionclosed: () => {
          void entry.session?.close('the client deleted the session');
          if (seal !== undefined) void endElsewhere(sid, entry.session?.planId);
        },
      }),
      session: undefined,
      owner: ownerOf(auth),
      client,
      active: resumed === undefined ? 1 : 0,
      lastSeen: Date.now(),
      streams: 0,
      recent: new Map(),
    };
    if (relay !== undefined) {
      // A change notification with no stream of the client here goes to the replica that holds it.
      const send = entry.transport.send.bind(entry.transport);
      entry.deliver = (message) => send(message as never);
      entry.transport.send = (message, sendOptions) => {
        if (sendOptions?.relatedRequestId === undefined && isRelayed(message)) {
          entry.recent.set(notificationKey(message), Date.now());
          if (entry.streams === 0) {
            relay?.publish(sid, message);
            return Promise.resolve();
          }
        }
        return send(message, sendOptions);
      };
    }
    if (resumed !== undefined) {
      // Initialized elsewhere: this transport takes the session as initialized under its id (the SDK keeps that in these fields).
      const inner = (entry.transport as unknown as { _webStandardTransport: { sessionId?: string; _initialized: boolean } })._webStandardTransport;
      inner.sessionId = id;
      inner._initialized = true;
    }
    opening++;
    try {
      entry.session = await gateway.connect(entry.transport, {
        transport: 'http',
        sessionId: sid,
        ...(auth === undefined ? {} : { authInfo: auth }),
        ...(resumed === undefined
          ? {}
          : {
              resumed: {
                ...(resumed.clientInfo === undefined ? {} : { clientInfo: resumed.clientInfo }),
                ...(resumed.capabilities === undefined ? {} : { capabilities: resumed.capabilities }),
                ...(resumed.protocolVersion === undefined ? {} : { protocolVersion: resumed.protocolVersion }),
                replica: replicaTag,
              },
            }),
      });
    } finally {
      opening--;
    }
    if (resumed !== undefined) {
      sessions.set(id, entry);
      logger.info(`MCP over HTTP: serving session ${sid}, opened on another replica, here${replicaId === undefined ? '' : ` (${replicaId})`}.`, {});
    }
    void entry.session.ended.then(() => {
      if (sessions.get(id) === entry) sessions.delete(id);
      logger.info(`MCP over HTTP: session ${sid} ended.`, {});
    });
    return entry;
  };

  const serve = (request: Request, response: Response): void => {
    handle(request, response).catch((error: unknown) => {
      logger.error(`MCP over HTTP: a request failed: ${messageOf(error)}`, {});
      rpcError(response, 500, -32603, 'Internal error.');
    });
  };

  // The fleet's relay of change notifications, when its registry can broadcast.
  let relay: FleetRelay | undefined;
  let sharedApprovals: FleetSessionApprovals | undefined;
  if (options.fleet !== undefined && isFleetBroadcast(fleetRegistry)) {
    relay = await FleetRelay.start(
      fleetRegistry,
      fleetKey as Buffer,
      replicaTag,
      logger,
      (sid, notification) => {
        const now = Date.now();
        for (const entry of sessions.values()) {
          if (entry.sid !== sid || entry.streams === 0 || entry.deliver === undefined) continue;
          const key = notificationKey(notification);
          if (now - (entry.recent.get(key) ?? 0) < RELAY_DEDUPE_MS) continue;
          entry.recent.set(key, now);
          entry.deliver(notification).catch(() => undefined);
        }
      },
      (sid, approval) => {
        sharedApprovals?.add(sid, approval);
        logger.info(
          `MCP over HTTP: an approval of '${approval.toolName}' for the rest of session ${sid} (${approval.scope}), given on another replica, holds here too.`,
          {},
        );
      },
    );
    // An approval a person gives "for the rest of the plan" in a session holds in the session's plans on every replica.
    sharedApprovals = new FleetSessionApprovals(relay);
    gateway.shareApprovals(sharedApprovals);
  }
  const server = await new Promise<HttpServer>((resolve, reject) => {
    // A backlog for many clients connecting at once: with Node's 511, a burst overflows the
    // listen queue and clients see connections reset or retried seconds later (capped by somaxconn).
    const listening = app.listen(port, host, HTTP_BACKLOG, (error?: Error) => (error === undefined ? resolve(listening) : reject(error)));
    listening.once('error', reject);
  }).catch(async (error: unknown) => {
    await relay?.close();
    throw error;
  });
  // Behind a load balancer or proxy that keeps connections open (nginx
  // keepalive, cloud load balancers idle for 60 s), Node's default of 5 s
  // closes a connection the proxy is about to reuse, and the request written
  // into it fails (ECONNRESET, a 502 for the client). Idle connections stay
  // open longer than the proxies' own idle limits; headers must still come
  // within the bound Node requires to be above it.
  server.keepAliveTimeout = HTTP_KEEP_ALIVE_MS;
  server.headersTimeout = HTTP_KEEP_ALIVE_MS + 1_000;
  listeningPort = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const endpoint = new URL(options.publicUrl ?? `http://${urlHost}:${listeningPort}${path}`);
  mountAuth(endpoint);
  const json = express.json({ limit: options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES });
  app.post(path, ...bearer, json, serve);
  app.get(path, ...bearer, serve);
  app.delete(path, ...bearer, serve);
  app.use((error: Error & { type?: string; status?: number }, _request: Request, response: Response, next: NextFunction) => {
    if (response.headersSent) return next(error);
    if (error.type === 'entity.too.large')
      return rpcError(response, 413, -32600, `Request too large: at most ${options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES} bytes.`);
    if (error.type === 'entity.parse.failed') return rpcError(response, 400, -32700, 'Parse error: the body is not JSON.');
    rpcError(response, error.status ?? 500, -32603, 'Internal error.');
  });

  // Sessions nobody uses end: a client that went away without deleting its session must not hold a plan forever.
  const sweep = setInterval(
    () => {
      const now = Date.now();
      limits.prune(now);
      for (const entry of sessions.values()) {
        if (entry.active <= 0 && now - entry.lastSeen >= idleMs)
          void entry.session?.close(`idle for ${Math.round((now - entry.lastSeen) / 1000)} s (session ${entry.sid})`);
      }
    },
    Math.max(10, Math.min(60_000, Math.floor(idleMs / 4))),
  );
  sweep.unref();

  return {
    url: endpoint,
    address: { host, port: listeningPort },
    get sessionCount() {
      return sessions.size;
    },
    get busySessionCount() {
      let busy = 0;
      for (const entry of sessions.values()) if (entry.active > 0) busy++;
      return busy;
    },
    close: () => {
      closing ??= (async () => {
        clearInterval(sweep);
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        // Listen streams get the graceful end (a result naming the subscription) before their connections close.
        await Promise.all([...listening].map((end) => end().catch(() => undefined)));
        if (sharedApprovals !== undefined) gateway.shareApprovals(undefined);
        await relay?.close();
        await Promise.all([...sessions.values()].map((entry) => entry.session?.close('the server stopped')));
        server.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}

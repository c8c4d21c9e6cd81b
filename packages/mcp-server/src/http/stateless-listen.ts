import type { ServerResponse } from 'node:http';
import { messageOf } from '@ca/domain';
import type { RuntimeLogger } from '@ca/tool-lifecycle';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { McpGateway, McpGatewaySession } from '../gateway/mcp-gateway';
import { EventStream, OneRequestTransport, SUBSCRIPTION_ID_KEY, askFreeCapabilities, type OutgoingNotification, type StatelessMessage } from './stateless';

/** What a `subscriptions/listen` request asks to hear of (MCP 2026-07-28 `SubscriptionFilter`). */
export interface SubscriptionFilter {
  readonly toolsListChanged?: boolean;
  readonly promptsListChanged?: boolean;
  readonly resourcesListChanged?: boolean;
  readonly resourceSubscriptions?: readonly string[];
}

/** Resources one listen stream may subscribe to. */
const MAX_RESOURCE_SUBSCRIPTIONS = 100;
const MAX_URI_LENGTH = 2_048;
/** A comment on an idle stream this often keeps it open through proxies that cut silent connections (many at 60 s). */
const KEEP_ALIVE_MS = 25_000;

/** The filter of a listen request, or why it is not one (the client gets `-32602`). */
export function subscriptionFilterOf(params: Record<string, unknown>): SubscriptionFilter | string {
  const filter = params['notifications'];
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) return 'params.notifications must be an object (a SubscriptionFilter)';
  const record = filter as Record<string, unknown>;
  for (const key of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const) {
    if (record[key] !== undefined && typeof record[key] !== 'boolean') return `params.notifications.${key} must be true or false`;
  }
  const uris = record['resourceSubscriptions'];
  if (uris !== undefined) {
    if (!Array.isArray(uris) || uris.some((uri) => typeof uri !== 'string' || uri.length === 0 || uri.length > MAX_URI_LENGTH)) {
      return `params.notifications.resourceSubscriptions must be a list of URIs of 1–${MAX_URI_LENGTH} characters`;
    }
    if (uris.length > MAX_RESOURCE_SUBSCRIPTIONS)
      return `params.notifications.resourceSubscriptions lists ${uris.length} resources; at most ${MAX_RESOURCE_SUBSCRIPTIONS} per stream`;
  }
  return {
    ...(record['toolsListChanged'] === true ? { toolsListChanged: true } : {}),
    ...(record['promptsListChanged'] === true ? { promptsListChanged: true } : {}),
    ...(record['resourcesListChanged'] === true ? { resourcesListChanged: true } : {}),
    ...(uris === undefined ? {} : { resourceSubscriptions: [...new Set(uris as string[])] }),
  };
}

/** Whether a notification of the session is one the stream's (honored) filter asked for. */
function wanted(notification: OutgoingNotification, filter: SubscriptionFilter): boolean {
  switch (notification.method) {
    case 'notifications/tools/list_changed':
      return filter.toolsListChanged === true;
    case 'notifications/prompts/list_changed':
      return filter.promptsListChanged === true;
    case 'notifications/resources/list_changed':
      return filter.resourcesListChanged === true;
    case 'notifications/resources/updated':
      return filter.resourceSubscriptions?.includes(String(notification.params?.['uri'])) === true;
    default:
      return false;
  }
}

/** What {@link serveListen} needs of the endpoint. */
export interface ListenContext {
  readonly gateway: McpGateway;
  readonly logger: RuntimeLogger;
  readonly auth: AuthInfo | undefined;
  /** Called with the function that ends the stream gracefully (the server stopping); returns the function that forgets it. */
  readonly track: (end: () => Promise<void>) => () => void;
}

/**
 * `subscriptions/listen` of MCP 2026-07-28: the response is a stream of
 * events that stays open — first `notifications/subscriptions/acknowledged`
 * with the filter honored, then each change the client asked for, each
 * stamped with the listen request's id (`_meta`
 * `io.modelcontextprotocol/subscriptionId`). Behind it is a session of the
 * gateway, with a plan, for as long as the client listens: its tool list is
 * listed once (a change is told against it, per the profile and policy, as to
 * a 2025 session), and it subscribes to the resources the filter names (those
 * an upstream server accepts are honored). The client closing the stream ends
 * the session and its plan; the server stopping answers the request (the
 * graceful end: a result with the subscription id) and then ends it.
 */
export async function serveListen(message: StatelessMessage, filter: SubscriptionFilter, response: ServerResponse, context: ListenContext): Promise<void> {
  const listenId = message.id as string | number;
  const stream = new EventStream(response);
  let honored: SubscriptionFilter | undefined;
  const transport = new OneRequestTransport(listenId, (notification) => {
    if (honored === undefined || !wanted(notification, honored)) return;
    const params = notification.params ?? {};
    const meta = typeof params['_meta'] === 'object' && params['_meta'] !== null ? (params['_meta'] as Record<string, unknown>) : {};
    stream.send({ jsonrpc: '2.0', method: notification.method, params: { ...params, _meta: { ...meta, [SUBSCRIPTION_ID_KEY]: listenId } } });
  });
  const clientGone = new Promise<void>((resolve) => response.once('close', resolve));
  let session: McpGatewaySession | undefined;
  let untrack: (() => void) | undefined;
  let keepAlive: NodeJS.Timeout | undefined;
  try {
    session = await context.gateway.connect(transport, {
      transport: 'http',
      ...(context.auth === undefined ? {} : { authInfo: context.auth }),
      resumed: {
        ...(message.clientInfo === undefined ? {} : { clientInfo: message.clientInfo }),
        capabilities: askFreeCapabilities(message.capabilities ?? {}),
        protocolVersion: message.protocolVersion,
      },
    });
    const offered = session.offer.capabilities as { resources?: { subscribe?: boolean }; prompts?: unknown };
    // Starts the session's plan and lists its tools once: a change is told against what it lists.
    await transport.ask('tools/list', {});
    const subscribed: string[] = [];
    if (offered.resources?.subscribe === true) {
      for (const uri of filter.resourceSubscriptions ?? []) {
        const answer = (await transport.ask('resources/subscribe', { uri })) as { error?: unknown } | undefined;
        if (answer !== undefined && answer.error === undefined) subscribed.push(uri);
      }
    }
    honored = {
      ...(filter.toolsListChanged === true ? { toolsListChanged: true } : {}),
      ...(filter.promptsListChanged === true && offered.prompts !== undefined ? { promptsListChanged: true } : {}),
      ...(filter.resourcesListChanged === true && offered.resources !== undefined ? { resourcesListChanged: true } : {}),
      ...(filter.resourceSubscriptions === undefined ? {} : { resourceSubscriptions: subscribed }),
    };
    if (stream.gone) return;
    stream.send({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [SUBSCRIPTION_ID_KEY]: listenId }, notifications: honored },
    });
    keepAlive = setInterval(() => stream.keepAlive(), KEEP_ALIVE_MS);
    keepAlive.unref();
    const serverInfo = session.offer.serverInfo;
    const endGracefully = async (): Promise<void> => {
      stream.send({
        jsonrpc: '2.0',
        id: listenId,
        result: { _meta: { [SUBSCRIPTION_ID_KEY]: listenId, 'io.modelcontextprotocol/serverInfo': serverInfo }, resultType: 'complete' },
      });
      stream.end();
    };
    untrack = context.track(endGracefully);
    // Until the client stops listening, or the session ends (the gateway stopping, the plan cancelled): then the graceful end.
    const ended = await Promise.race([clientGone.then(() => 'client' as const), transport.closedPromise.then(() => 'session' as const)]);
    if (ended === 'session') await endGracefully();
  } catch (error) {
    context.logger.debug(`MCP over HTTP: a subscriptions/listen stream ended: ${messageOf(error)}`, {});
    if (!stream.isOpen && !response.headersSent) {
      response.statusCode = 200;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ jsonrpc: '2.0', id: listenId, error: { code: -32603, message: `Internal error: ${messageOf(error)}` } }));
    } else stream.end();
  } finally {
    clearInterval(keepAlive);
    untrack?.();
    await session?.close('its client stopped listening');
  }
}

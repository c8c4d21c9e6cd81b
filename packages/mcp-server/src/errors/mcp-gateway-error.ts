import { CaError, type CaErrorOptions } from '@ca/domain';

/** Stable codes of {@link McpGatewayError}. */
export type McpGatewayErrorCode =
  | 'GATEWAY_INVALID_ARGUMENT'
  | 'GATEWAY_HTTP_UNSAFE'
  | 'GATEWAY_AUTH_SETUP_FAILED'
  | 'GATEWAY_SESSION_LIMIT'
  | 'GATEWAY_RATE_LIMIT'
  | 'GATEWAY_CALL_LIMIT'
  | 'GATEWAY_SESSION_ENDED'
  | 'GATEWAY_OUTPUT_UNFIT'
  | 'GATEWAY_RESOURCE_UNKNOWN'
  | 'GATEWAY_PROMPT_UNKNOWN';

/** What went wrong, with the data the message is built from. */
export type McpGatewayProblem =
  /** A public entry point got a value it cannot use. */
  | { readonly kind: 'invalid-argument'; readonly field: string; readonly expected: string; readonly received: string }
  /** Serving over HTTP as asked would let others reach the tools (a host beyond loopback, no allowed host names, no sign-in). */
  | { readonly kind: 'http-unsafe'; readonly host: string; readonly reason: string; readonly advice: string }
  /** The issuer's metadata or keys could not be read when the server started. */
  | { readonly kind: 'auth-setup'; readonly issuer: string; readonly reason: string }
  /** The server (or this client) holds as many sessions as it may, and none of them is idle. */
  | { readonly kind: 'session-limit'; readonly limit: number; readonly scope?: 'replica' | 'client' }
  /** This client made more requests in a minute than it may. */
  | { readonly kind: 'rate-limit'; readonly limit: number; readonly retryAfterMs: number }
  /** A session asked for more calls than it may make (at once, or in all). */
  | { readonly kind: 'call-limit'; readonly limit: number; readonly scope: 'at-once' | 'per-session' }
  /** The session's plan has ended (cancelled from elsewhere, timed out, closed). */
  | { readonly kind: 'session-ended'; readonly reason: string }
  /** A tool's result cannot be given as the tool's MCP definition promises (structured content missing, invalid or too large). */
  | { readonly kind: 'output-unfit'; readonly reason: string }
  /** No upstream server offers the resource. */
  | { readonly kind: 'resource-unknown'; readonly uri: string }
  /** No upstream server offers the prompt. */
  | { readonly kind: 'prompt-unknown'; readonly name: string; readonly known: readonly string[] };

/** Options of {@link McpGatewayError}. */
export interface McpGatewayErrorOptions extends CaErrorOptions {
  readonly problem: McpGatewayProblem;
}

const CODES: Readonly<Record<McpGatewayProblem['kind'], McpGatewayErrorCode>> = {
  'invalid-argument': 'GATEWAY_INVALID_ARGUMENT',
  'http-unsafe': 'GATEWAY_HTTP_UNSAFE',
  'auth-setup': 'GATEWAY_AUTH_SETUP_FAILED',
  'session-limit': 'GATEWAY_SESSION_LIMIT',
  'rate-limit': 'GATEWAY_RATE_LIMIT',
  'call-limit': 'GATEWAY_CALL_LIMIT',
  'session-ended': 'GATEWAY_SESSION_ENDED',
  'output-unfit': 'GATEWAY_OUTPUT_UNFIT',
  'resource-unknown': 'GATEWAY_RESOURCE_UNKNOWN',
  'prompt-unknown': 'GATEWAY_PROMPT_UNKNOWN',
};

function messageOf(problem: McpGatewayProblem, options: CaErrorOptions): string {
  const tool = options.toolName === undefined ? '' : `Tool '${options.toolName}'`;
  const plan = options.planId === undefined ? '' : ` (plan '${options.planId}')`;
  switch (problem.kind) {
    case 'invalid-argument':
      return `The MCP gateway's ${problem.field} is not valid: expected ${problem.expected}, got ${problem.received}.`;
    case 'http-unsafe':
      return `Serving MCP over HTTP on ${problem.host} is refused: ${problem.reason}. ${problem.advice}`;
    case 'auth-setup':
      return `The OAuth issuer ${problem.issuer} could not be used to check tokens: ${problem.reason}. Check the issuer URL (its /.well-known/oauth-authorization-server or openid-configuration must be reachable from here), or configure token introspection instead.`;
    case 'session-limit':
      return problem.scope === 'client'
        ? `This client already holds ${problem.limit} MCP session(s) of this gateway, each busy, its limit: wait for one to finish, close one (DELETE), or raise maxSessionsPerClient.`
        : `The MCP gateway already serves ${problem.limit} session(s), each busy, its limit: retry later, close a session (an MCP client's DELETE), or raise maxSessions.`;
    case 'rate-limit':
      return `This client made more than ${problem.limit} request(s) to the MCP gateway in a minute, its limit: retry after ${Math.ceil(problem.retryAfterMs / 1000)} s, or raise requestsPerMinute.`;
    case 'call-limit':
      return problem.scope === 'at-once'
        ? `This MCP session already runs ${problem.limit} call(s) at once, its limit${plan}: wait for one to finish, or raise the gateway's maxConcurrentCalls.`
        : `This MCP session has made ${problem.limit} call(s), its limit${plan}: start a new session, or raise the gateway's maxCallsPerSession.`;
    case 'session-ended':
      return `This MCP session's plan${plan} has ended (${problem.reason}): reconnect to start a new session.`;
    case 'output-unfit':
      return `${tool}${plan} returned an output the gateway cannot pass on as its definition promises: ${problem.reason}.`;
    case 'resource-unknown':
      return `No upstream MCP server offers the resource '${problem.uri}'${plan}: list the resources (resources/list) and read one of those, or one a listed template matches.`;
    case 'prompt-unknown':
      return `No upstream MCP server offers a prompt named '${problem.name}'${plan}.${problem.known.length === 0 ? ' None offers any prompt.' : ` The prompts are: ${problem.known.slice(0, 20).join(', ')}${problem.known.length > 20 ? ', …' : ''}.`}`;
  }
}

/**
 * An error of the MCP gateway: a setting it cannot use, a server that would
 * be unsafe to start, a limit of a session, an upstream resource or prompt
 * that does not exist. What a client's *call* gets wrong (an unknown tool,
 * invalid arguments, a refusal of the plan's policy) is never thrown at the
 * client: it is a `CallToolResult` with `isError`, the text saying what to
 * change.
 */
export class McpGatewayError extends CaError {
  declare readonly code: McpGatewayErrorCode;
  readonly problem: McpGatewayProblem;

  constructor(options: McpGatewayErrorOptions) {
    super(CODES[options.problem.kind], messageOf(options.problem, options), options);
    this.problem = options.problem;
  }
}

/** `GATEWAY_INVALID_ARGUMENT` for `field`. @internal */
export function invalidArgument(field: string, expected: string, received: string): McpGatewayError {
  return new McpGatewayError({ problem: { kind: 'invalid-argument', field, expected, received } });
}

import { describeValue } from '@ca/domain';
import type { BoundResource, PlanPolicy } from '@ca/tool-context';
import { compileToolPattern, type ApprovalRequest, type InteractionRequest, type InteractionResponse, type PatternMatcher } from '@ca/tool-lifecycle';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { invalidArgument } from '../errors/mcp-gateway-error';

/** How a session offers its tools: each as itself, or a search tool and a call tool (plus the pinned ones) for large catalogs. */
export type McpToolMode = 'all' | 'search';

/**
 * What one client session is given: its plan (policy, bound resources) and
 * which tools it sees. A named profile of the configuration (`read-only`,
 * `checkpoint`, a custom one) becomes one of these.
 */
export interface McpSessionProfile {
  /** The plan's policy. Default: read-write, no checkpoints, network allowed, no approval policy. */
  readonly policy?: PlanPolicy;
  /** What the plan may touch (the built-in file tools refuse anything else). */
  readonly resources?: readonly BoundResource[];
  /** The plan's id; default `mcp-<session id>` (HTTP) or `mcp-<random>` (stdio). Must be unique among running plans. */
  readonly planId?: string;
  /** Shown with the plan by a plan registry (`agents plan list`). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Cancel the session's plan (and end the session) after this many ms. */
  readonly timeoutMs?: number;
  /** Globs of the runtime's tool names the session may see and call; default every tool. */
  readonly tools?: readonly string[];
  /** `'all'` (default): every tool as itself. `'search'`: `tools.search`, `tools.call` and the `pin`ned tools. */
  readonly mode?: McpToolMode;
  /** In `'search'` mode, globs of tools listed as themselves besides the two meta tools. */
  readonly pin?: readonly string[];
}

/** What the gateway knows of a session when it chooses its profile. */
export interface McpSessionInfo {
  /** `stdio`, `http`, or the name a caller of `connect` gives. */
  readonly transport: string;
  /** The Streamable HTTP session id, when there is one. */
  readonly sessionId?: string;
  /** The client's verified token (OAuth resource-server mode). */
  readonly authInfo?: AuthInfo;
  /**
   * A session another replica of a fleet opened, served here from what its
   * sealed id carries: the client initialized there, so this server takes
   * its introduction as given.
   */
  readonly resumed?: {
    readonly clientInfo?: { readonly name: string; readonly version: string };
    readonly capabilities?: Record<string, unknown>;
    readonly protocolVersion?: string;
    /** A short name of this replica, which the session's plan id here ends with (`mcp-<session>.<replica>`): the opening replica's plan keeps `mcp-<session>`. */
    readonly replica?: string;
  };
  /**
   * @internal For a request of MCP 2026-07-28 whose client takes form
   * elicitation: its answers to earlier questions, and where a new question
   * is kept (the request is then answered `input_required`).
   */
  readonly inputs?: StatelessQuestions;
}

/** @internal What a stateless request's client answered, and where its plan's question goes. */
export interface StatelessQuestions {
  /** The answer to this approval's form from an earlier round; else the question is kept and `undefined` returned. */
  answer(form: InteractionRequest, approval: ApprovalRequest): InteractionResponse | undefined;
}

/** A profile checked and compiled. @internal */
export interface ResolvedProfile {
  readonly policy: PlanPolicy | undefined;
  readonly resources: readonly BoundResource[];
  readonly planId: string | undefined;
  readonly labels: Readonly<Record<string, string>>;
  readonly timeoutMs: number | undefined;
  readonly mode: McpToolMode;
  /** True for a tool the session may see and call. */
  readonly offers: PatternMatcher;
  /** True for a tool listed as itself in search mode. */
  readonly pinned: PatternMatcher;
}

const everything: PatternMatcher = () => true;
const nothing: PatternMatcher = () => false;

function anyOf(patterns: readonly string[] | undefined, field: string, fallback: PatternMatcher): PatternMatcher {
  if (patterns === undefined) return fallback;
  if (!Array.isArray(patterns) || patterns.some((pattern) => typeof pattern !== 'string' || pattern.length === 0)) {
    throw invalidArgument(field, 'a list of tool name globs (e.g. ["builtin.fs.*", "mcp.everything.echo"])', describeValue(patterns));
  }
  const matchers = patterns.map(compileToolPattern);
  return (name) => matchers.some((matches) => matches(name));
}

/**
 * Checks a profile and compiles its globs.
 * @throws McpGatewayError (`GATEWAY_INVALID_ARGUMENT`) for a field it cannot use.
 * @internal
 */
export function resolveProfile(profile: McpSessionProfile | undefined): ResolvedProfile {
  const value = profile ?? {};
  if (typeof value !== 'object' || value === null)
    throw invalidArgument('profile', 'an object { policy?, resources?, tools?, mode?, pin? }', describeValue(profile));
  if (value.mode !== undefined && value.mode !== 'all' && value.mode !== 'search')
    throw invalidArgument('profile.mode', "'all' or 'search'", describeValue(value.mode));
  if (value.resources !== undefined && !Array.isArray(value.resources))
    throw invalidArgument('profile.resources', 'a list of bound resources', describeValue(value.resources));
  if (value.labels !== undefined && (typeof value.labels !== 'object' || value.labels === null)) {
    throw invalidArgument('profile.labels', 'an object of string labels', describeValue(value.labels));
  }
  return {
    policy: value.policy,
    resources: value.resources ?? [],
    planId: value.planId,
    labels: value.labels ?? {},
    timeoutMs: value.timeoutMs,
    mode: value.mode ?? 'all',
    offers: anyOf(value.tools, 'profile.tools', everything),
    pinned: anyOf(value.pin, 'profile.pin', nothing),
  };
}

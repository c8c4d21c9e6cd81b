import type { InteractionHandler, RuntimeLogger, SamplingHandler } from '@ca/tool-lifecycle';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerScope, McpServersConfig } from './mcp-config';
import type { McpTokenStore } from './mcp-oauth';
import type { McpToolListCache } from './mcp-tool-list-cache';
import type { McpSpawn } from './process-stdio-transport';

/** Settings of {@link createMcpAdapter} and {@link registerMcpAdapter}. */
export interface McpAdapterSettings {
  /**
   * The servers: an `mcpServers` document, or the path of a JSON file holding
   * one (read on first use; its errors surface from `discover`).
   */
  readonly servers: McpServersConfig | string;
  /**
   * The scope of a server whose entry says none (default `'plan'`: one
   * session per plan). `'shared'` suits a gateway serving many clients
   * alike (`agents mcp serve` sets it): every plan shares a pool of
   * `poolSize` sessions per server, and a server that keeps state per client
   * opts out with `"scope": "plan"` in its entry.
   */
  readonly defaultScope?: McpServerScope;
  /** Identifies the source in messages; default `mcp:<server names>` or `mcp:<file path>`. */
  readonly id?: string;
  /** Starts stdio servers; default `child_process.spawn`. Must honour `detached` and `stdio`. */
  readonly spawn?: McpSpawn;
  /** `fetch` for Streamable HTTP servers (and their OAuth authorization servers); default the global `fetch`. */
  readonly fetch?: FetchLike;
  /** Where the adapter logs (server stderr at debug, failures at warn/error); default the container's or the console's. */
  readonly logger?: RuntimeLogger;
  /** Most pages of `tools/list` followed per server (default 100); also bounds the resource and prompt lists. */
  readonly maxToolPages?: number;
  /**
   * How long, in ms, the session opened to discover a plan-scoped server is
   * kept, to be handed to the first plan that activates one of that server's
   * tools instead of starting the server again (default 0: it is closed as soon
   * as the tools are listed). The plan that takes it owns it as if it had
   * opened it, so no two plans share a session. For short-lived processes that
   * discover and then run one plan, such as a command-line tool; a session no
   * plan takes is closed when the time is up, or by `dispose()`.
   */
  readonly discoverySessionReuseMs?: number;
  /**
   * How a stdio server is stopped when its session closes. `'graceful'`
   * (default): its stdin is closed and it gets `shutdownGraceMs` to exit on
   * its own, then SIGTERM, then SIGKILL. `'prompt'`: SIGTERM goes with the end
   * of stdin, then SIGKILL after `shutdownGraceMs` — for a process whose user
   * waits for it to end and cannot see the servers' shutdown (a command-line
   * tool). Either way the whole process group is gone when the close resolves.
   */
  readonly shutdown?: 'graceful' | 'prompt';
  /**
   * Asks a person when a server wants it: elicitation (a form, or a page to
   * open) and the OAuth sign-in page. Default: the container's
   * `INTERACTION_HANDLER`, else none — then the client declares no
   * elicitation capability (servers list no tool that needs it), and a server
   * that wants a person to sign in fails with `MCP_AUTH_REQUIRED`.
   */
  readonly interactionHandler?: InteractionHandler;
  /**
   * Generates messages when a server asks (sampling). Default: the
   * container's `SAMPLING_HANDLER`, else none — then the client declares no
   * sampling capability.
   */
  readonly samplingHandler?: SamplingHandler;
  /** Most sampling requests one plan may make, across the source's servers (default 10); more are refused. */
  readonly maxSamplingRequestsPerPlan?: number;
  /** Where OAuth credentials are kept (default: in memory, for as long as the source lives). */
  readonly tokenStore?: McpTokenStore;
  /** How long a person has to complete an OAuth sign-in, in ms (default 300,000). */
  readonly authorizationTimeoutMs?: number;
  /**
   * Where each server's tool list is kept between processes (default: none).
   * With one, `discover` takes a server's list from it when it is younger
   * than `toolListTtlMs`, starting no server; the server starts at the first
   * call of one of its tools. A server listed anew (no entry, an old one, a
   * `list_changed`, or a session opened for a plan that finds the list
   * changed) is saved again.
   */
  readonly toolListCache?: McpToolListCache;
  /** How long a cached tool list is used, in ms (default 86,400,000: a day). */
  readonly toolListTtlMs?: number;
}

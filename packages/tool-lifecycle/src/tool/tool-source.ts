import type { ToolSourceKind } from '@ca/domain';
import type { SchemaTrust } from '@ca/schema';
import type { ToolDescriptor } from './tool-descriptor';
import type { ToolInstance } from './tool-instance';

/**
 * A tool that a source could not offer, with the reason (e.g. an MCP tool
 * whose schema does not compile). Other tools of the source stay usable.
 */
export interface UnavailableTool {
  readonly name: string;
  readonly source: ToolSourceKind;
  readonly reason: string;
  readonly error?: Error & { readonly code?: string };
}

/**
 * One origin of tools: an MCP server configuration, a skills root, the
 * built-ins, a set of custom tools. Many sources of one kind may coexist.
 */
export interface ToolSource {
  /** Which kind of source this is. */
  readonly kind: ToolSourceKind;
  /** Identifies the source in messages (`mcp:everything`, `skills:/path`). */
  readonly id: string;
  /**
   * Whether the schemas of this source's tools are the service's own.
   * Default `'untrusted'`: the runtime compiles them so that their patterns
   * run on a linear-time engine, and a pattern that engine cannot run
   * (lookaround, backreferences) makes that tool unavailable with the reason.
   * Declare `'trusted'` only when every schema the source lists is written by
   * the service itself (built-in and custom tools do); never for schemas that
   * come from a server, a file or a package the service does not control.
   */
  readonly schemaTrust?: SchemaTrust;
  /**
   * Lists the tools this source offers, cheaply: it never activates a tool
   * and never loads heavy content.
   * @throws when the source as a whole cannot be listed (a server that does
   * not start); the error names the source.
   */
  discover(signal?: AbortSignal): Promise<readonly ToolDescriptor[]>;
  /**
   * The instance of a tool this source listed.
   * @throws when the name is not one of this source's tools.
   */
  get(name: string): ToolInstance | Promise<ToolInstance>;
  /**
   * The scope under which a tool's definition is pinned in a lock (optional;
   * default: the source's id). It must not depend on which other tools,
   * sources or servers are configured: an MCP source answers `mcp:<server>`
   * for `mcp.<server>.<tool>` (and for `mcp.<server>`), so a command that
   * starts one server finds the pins of that server. A scope with pins has
   * every one of its tools checked.
   */
  pinScope?(toolName: string): string;
  /**
   * The definition of a tool as the source's origin offers it now, for a
   * tool whose definition is pinned, before its first call (optional). A
   * source that lists from a cache (an MCP server's tool list kept between
   * processes) lists it live here; one that has listed live answers from
   * what it holds. `undefined` when the source no longer offers the tool.
   * @throws when the origin cannot be asked (a server that does not start): the tool is then not called.
   */
  confirm?(toolName: string, signal?: AbortSignal): Promise<ToolDescriptor | undefined>;
  /** Tools the source saw but cannot offer, with reasons (optional). */
  unavailable?(): readonly UnavailableTool[];
  /**
   * Subscribes to changes of the tool list (MCP `list_changed`); the runtime
   * rediscovers this source when called. Returns an unsubscribe function.
   */
  onToolsChanged?(listener: () => void): () => void;
  /** Releases what the source holds across plans (shared sessions, watchers). */
  dispose?(): Promise<void>;
}

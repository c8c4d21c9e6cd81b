import { createHash } from 'node:crypto';
import { canonicalJson } from '@ca/tool-lifecycle';
import type { Tool as McpToolDefinition } from '@modelcontextprotocol/sdk/types.js';
import type { ParsedMcpServer } from './mcp-config';
import type { ServerOffer } from './mcp-operations';

/** What a server offered when it was last listed: enough to describe its tools without starting it. */
export interface McpToolListing {
  /** Every tool of `tools/list`, as the server sent it. */
  readonly tools: readonly McpToolDefinition[];
  readonly offer: ServerOffer;
  readonly serverVersion?: string;
  /** The server runs tool calls as tasks. */
  readonly runsToolTasks: boolean;
}

/** One server's cached list. */
export interface McpCachedToolList {
  /** The configured server's name (for people reading the cache; the key decides). */
  readonly server: string;
  /** When the server was last listed, ISO-8601. */
  readonly savedAt: string;
  readonly listing: McpToolListing;
}

/**
 * Where the adapter keeps each server's tool list between processes, so that
 * discovering the tools (and searching them) starts no server: `load` and
 * `save` by a key that stands for the server's configuration (see
 * {@link toolListKey}). The `agents` command keeps it in files in its state
 * folder; a service can keep it wherever it keeps state. What it holds came
 * from servers: the adapter reads it as untrusted, as it reads servers.
 */
export interface McpToolListCache {
  /** The entry saved under `key`, or `undefined`. */
  load(key: string): Promise<McpCachedToolList | undefined>;
  save(key: string, entry: McpCachedToolList): Promise<void>;
}

/** A {@link McpToolListCache} in memory: lists last as long as the cache (for tests, and sources built again in one process). */
export class MemoryToolListCache implements McpToolListCache {
  private readonly entries = new Map<string, McpCachedToolList>();

  async load(key: string): Promise<McpCachedToolList | undefined> {
    return this.entries.get(key);
  }

  async save(key: string, entry: McpCachedToolList): Promise<void> {
    this.entries.set(key, entry);
  }

  /** How many lists it holds. */
  get size(): number {
    return this.entries.size;
  }
}

/** The version of the cached form; a cache written in another form is not read. */
const CACHE_FORM = 'ca.mcp.tool-list/2';

/**
 * The key of a server's cached list: a SHA-256 of everything that decides what
 * the server lists — how it is started or reached (command, arguments,
 * environment, folder, sandbox; URL, headers, OAuth client and scope) and what
 * the client declares (elicitation, sampling, roots). Timeouts, tool filters,
 * capability overrides and trust are applied to the list, not sent to the
 * server, so changing them keeps the key. Secrets in the configuration enter
 * only through the hash.
 */
export function toolListKey(server: ParsedMcpServer, client: { readonly elicitation: boolean; readonly sampling: boolean }): string {
  const identity = {
    form: CACHE_FORM,
    name: server.name,
    transport: server.transport,
    command: server.command ?? null,
    args: server.args,
    env: server.env,
    cwd: server.cwd ?? null,
    inheritEnv: server.inheritEnv,
    sandbox: server.sandbox ?? null,
    url: server.url ?? null,
    headers: server.headers,
    oauth:
      server.oauth === undefined
        ? null
        : {
            grant: server.oauth.grant,
            clientId: server.oauth.clientId ?? null,
            scope: server.oauth.scope ?? null,
            metadata: server.oauth.clientMetadataUrl ?? null,
          },
    roots: server.roots,
    client,
  };
  return createHash('sha256').update(canonicalJson(identity)).digest('hex');
}

/** Most tools a cached list may hold (what `maxToolPages` of 100 pages of 1,000 would bring). */
const MAX_CACHED_TOOLS = 100_000;

/**
 * The entry, when it has the cached form: a server name, a time, and a
 * listing whose tools have string names. Anything else (a file edited by
 * hand, another version's form) is `undefined`, and the server is listed again.
 */
export function readCachedToolList(entry: unknown): McpCachedToolList | undefined {
  const value = entry as Partial<McpCachedToolList> | null;
  if (typeof value !== 'object' || value === null || typeof value.server !== 'string' || typeof value.savedAt !== 'string') return undefined;
  if (!Number.isFinite(Date.parse(value.savedAt))) return undefined;
  const listing = value.listing as Partial<McpToolListing> | undefined;
  if (typeof listing !== 'object' || listing === null || !Array.isArray(listing.tools) || listing.tools.length > MAX_CACHED_TOOLS) return undefined;
  if (!listing.tools.every((tool) => typeof tool === 'object' && tool !== null && typeof tool.name === 'string')) return undefined;
  const offer = listing.offer as Partial<ServerOffer> | undefined;
  if (typeof offer !== 'object' || offer === null || typeof offer.resources !== 'boolean' || typeof offer.prompts !== 'boolean') return undefined;
  if (typeof offer.subscribe !== 'boolean' || typeof offer.completions !== 'boolean') return undefined;
  for (const known of [offer.knownResources, offer.knownPrompts]) {
    if (known !== undefined && (!Array.isArray(known) || !known.every((item) => typeof item === 'object' && item !== null))) return undefined;
  }
  if (typeof listing.runsToolTasks !== 'boolean') return undefined;
  if (listing.serverVersion !== undefined && typeof listing.serverVersion !== 'string') return undefined;
  return value as McpCachedToolList;
}

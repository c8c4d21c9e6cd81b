import type { SchemaValidator } from '@ca/schema';
import type { RuntimeLogger } from '@ca/tool-lifecycle';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServersConfig } from './mcp-config';
import type { McpSpawn } from './process-stdio-transport';

/** Settings of {@link createMcpAdapter} and {@link registerMcpAdapter}. */
export interface McpAdapterSettings {
  /**
   * The servers: an `mcpServers` document, or the path of a JSON file holding
   * one (read on first use; its errors surface from `discover`).
   */
  readonly servers: McpServersConfig | string;
  /** Identifies the source in messages; default `mcp:<server names>` or `mcp:<file path>`. */
  readonly id?: string;
  /** Starts stdio servers; default `child_process.spawn`. Must honour `detached` and `stdio`. */
  readonly spawn?: McpSpawn;
  /** `fetch` for Streamable HTTP servers; default the global `fetch`. */
  readonly fetch?: FetchLike;
  /** Where the adapter logs (server stderr at debug, failures at warn/error); default the container's or the console's. */
  readonly logger?: RuntimeLogger;
  /** Checks tool schemas at discovery; default `createSchemaValidator()` from `@ca/schema`. */
  readonly schemaValidator?: SchemaValidator;
  /** Most pages of `tools/list` followed per server (default 100). */
  readonly maxToolPages?: number;
}

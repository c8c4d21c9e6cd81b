import type { DiscoveryResult, ToolCatalog } from '../catalog';
import { ToolSearchIndex, type ToolSearchHit, type ToolSearchOptions, type ToolSearchReranker } from './tool-search';

/**
 * The runtime's tool search: one index kept in step with the catalog. The
 * catalog keeps its list until a source reports a change (MCP
 * `list_changed`, `onToolsChanged` of any source) or a refresh is asked for,
 * and then lists anew; each search asks the catalog for its list, and when
 * the list is a new one, the index re-reads the tools whose name,
 * description or input schema changed, and no other.
 */
export class CatalogSearch {
  private readonly index: ToolSearchIndex;
  private indexed: DiscoveryResult | undefined;

  constructor(
    private readonly catalog: ToolCatalog,
    reranker: ToolSearchReranker | undefined,
  ) {
    this.index = new ToolSearchIndex(reranker === undefined ? {} : { reranker });
  }

  async search(query: string, options: ToolSearchOptions = {}): Promise<ToolSearchHit[]> {
    const signal = options?.signal ?? (options?.ctx as { cancellationToken?: { signal?: AbortSignal } } | undefined)?.cancellationToken?.signal;
    const listed = await this.catalog.discover(signal === undefined ? {} : { signal });
    if (listed !== this.indexed) {
      this.index.update(listed.tools);
      this.indexed = listed;
    }
    return this.index.search(query, signal === undefined || options?.signal !== undefined ? options : { ...options, signal });
  }
}

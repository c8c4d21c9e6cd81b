// Tool search: a lexical index over the catalog (BM25F, or a pattern), kept current with it.
export { CatalogSearch } from './catalog-search';
export { PlainBm25 } from './plain-bm25';
export { ToolSearchIndex, TOOL_SEARCH_RERANKER } from './tool-search';
export type {
  ToolRerankRequest,
  ToolSearchCandidate,
  ToolSearchHit,
  ToolSearchIndexSettings,
  ToolSearchMode,
  ToolSearchOptions,
  ToolSearchReranker,
} from './tool-search';
export { ToolSearchError } from './tool-search-error';
export type { ToolSearchErrorOptions } from './tool-search-error';
export { createSearchTool, SEARCH_TOOL_NAME } from './search-tool';
export type { ToolsSearchFound, ToolsSearchInput, ToolsSearchOutput } from './search-tool';

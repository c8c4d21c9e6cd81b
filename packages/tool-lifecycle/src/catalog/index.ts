// The catalog: every source's tools, discovered once, schemas compiled once, names unique.
export { ToolCatalog, isTimeout, schemaTrustOf } from './tool-catalog';
export type { DiscoveryResult, RegisteredTool, SourceError, ToolCatalogSettings } from './tool-catalog';

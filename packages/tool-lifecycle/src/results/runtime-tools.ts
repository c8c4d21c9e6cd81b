import { ToolInvalidArgumentError } from '../errors';
import type { RuntimeLogger } from '../observability';
import { createSearchTool, type ToolSearchHit, type ToolSearchOptions } from '../search';
import { ToolSet, type ToolInstance } from '../tool';
import { MemoryResultStore } from './memory-result-store';
import { OutputBudget, type OutputBudgetOptions } from './output-budget';
import { ResultHandles } from './result-handles';
import { isResultStore, type ResultStore } from './result-store';
import { createResultTools } from './result-tools';

/**
 * The runtime's results over the budget, when the runtime has an output
 * budget: its store (the one given, or a `MemoryResultStore`) and budgets.
 * @throws ToolInvalidArgumentError for a budget of the wrong shape, or a store given without a budget or of the wrong shape.
 */
export function createResultHandles(budget: OutputBudgetOptions | undefined, store: ResultStore | undefined, logger: RuntimeLogger): ResultHandles | undefined {
  if (store !== undefined && !isResultStore(store)) {
    throw new ToolInvalidArgumentError({ argument: 'resultStore', expected: 'a ResultStore: an object with create, get, read and dropPlan', received: store });
  }
  if (budget === undefined) return undefined;
  return new ResultHandles(store ?? new MemoryResultStore(), new OutputBudget(budget), logger);
}

/**
 * The tools the runtime itself offers, as a source of kind `builtin`:
 * `tools.search` (with `searchTool: true`) and `results.read` and
 * `results.grep` (with an output budget). `undefined` when there are none.
 */
export function createRuntimeToolSet(
  handles: ResultHandles | undefined,
  search: ((query: string, options: ToolSearchOptions) => Promise<ToolSearchHit[]>) | undefined,
): ToolSet | undefined {
  const tools: ToolInstance[] = handles === undefined ? [] : createResultTools(handles);
  if (search !== undefined) {
    const hidden = new Set(['tools.search', ...tools.map((tool) => tool.descriptor.name)]);
    tools.unshift(createSearchTool(search, hidden) as ToolInstance);
  }
  return tools.length === 0 ? undefined : new ToolSet({ id: 'runtime', kind: 'builtin', tools, schemaTrust: 'trusted' });
}

import type { JsonSchema } from '@ca/domain';
import type { ToolInstance } from '@ca/tool-lifecycle';
import { toJsonSchema, type JsonSchemaConverter } from './foreign-schema';
import { buildForeignTool, type ForeignToolOptions } from './foreign-tool';
import { WrappedToolError } from './wrapped-tool-error';

/** The config this package passes to a LangChain tool's `invoke` (a subset of `RunnableConfig`). */
export interface LangChainInvokeConfig {
  readonly signal?: AbortSignal;
  readonly runName?: string;
  readonly metadata?: Record<string, unknown>;
}

/**
 * The shape of a LangChain.js tool (`tool(fn, { name, description, schema })`
 * from `@langchain/core/tools`, or a `StructuredTool`), as far as this package
 * needs it. Structural: `@langchain/core` is not imported.
 */
export interface LangChainToolLike {
  readonly name: string;
  readonly description: string;
  /** A zod schema or a JSON Schema object. */
  readonly schema?: unknown;
  invoke(input: never, config?: LangChainInvokeConfig): Promise<unknown>;
}

/** Options of {@link fromLangChainTool}. */
export interface FromLangChainToolOptions extends ForeignToolOptions {
  /** Name in the runtime; default the tool's own `name`. */
  readonly name?: string;
  /** Description; default the tool's. */
  readonly description?: string;
  /** JSON Schema of the input, instead of converting the tool's `schema`. */
  readonly inputSchema?: JsonSchema;
  /** JSON Schema of the output (LangChain tools declare none). */
  readonly outputSchema?: JsonSchema;
  /** Converts a schema this package cannot convert itself, e.g. `toJsonSchema` from `@langchain/core/utils/json_schema`. */
  readonly toJsonSchema?: JsonSchemaConverter;
}

/**
 * Makes a `ToolInstance` (source kind `'wrapped'`, `annotations.foreignKind:
 * 'langchain'`) of a LangChain.js tool. A call is
 * `tool.invoke(input, { signal, runName, metadata: { planId, executionId } })`
 * with the plan's signal; what `invoke` resolves to is the output. LangChain
 * still validates the input against its own schema (an invalid one throws).
 *
 * @throws WrappedToolError (`WRAP_FOREIGN_TOOL_INVALID` for something without
 *   `invoke`, `WRAP_SCHEMA_UNCONVERTIBLE`, `WRAP_INVALID_OPTIONS`, `WRAP_SCHEMA_INVALID`).
 */
export function fromLangChainTool(tool: LangChainToolLike, options: FromLangChainToolOptions): ToolInstance {
  if (typeof tool !== 'object' || tool === null || typeof tool.invoke !== 'function') {
    throw new WrappedToolError({ problem: 'not-callable', call: 'fromLangChainTool', received: tool });
  }
  const safe = (typeof options === 'object' && options !== null ? options : {}) as Partial<FromLangChainToolOptions>;
  const name = safe.name ?? tool.name;
  const toolName = typeof name === 'string' ? name : String(name);
  const inputSchema =
    safe.inputSchema ??
    (tool.schema === undefined ? undefined : toJsonSchema(tool.schema, { toolName, direction: 'input', library: 'LangChain' }, safe.toJsonSchema));
  const invoke = tool.invoke.bind(tool) as (input: unknown, config: LangChainInvokeConfig) => Promise<unknown>;
  const runName = typeof tool.name === 'string' ? tool.name : toolName;
  return buildForeignTool({
    kind: 'langchain',
    library: 'LangChain',
    name,
    description: safe.description ?? tool.description,
    inputSchema,
    outputSchema: safe.outputSchema,
    options,
    run: (input, ctx) =>
      invoke(input, {
        signal: ctx.cancellationToken.signal,
        runName,
        metadata: { planId: ctx.planId, ...(ctx.executionId === undefined ? {} : { executionId: ctx.executionId }) },
      }),
  });
}

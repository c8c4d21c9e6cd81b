import type { JsonSchema } from '@ca/domain';
import type { ToolExecutionContext } from '@ca/tool-context';
import type { ToolInstance, ToolProgress } from '@ca/tool-lifecycle';
import { buildForeignTool, type ForeignToolOptions } from './foreign-tool';
import { WrappedToolError } from './wrapped-tool-error';

/** The second argument of a function turned into a tool by {@link fromFunction}. */
export interface FunctionToolContext {
  /** Aborts when the plan is cancelled or the call's deadline passes; pass it to everything that waits. */
  readonly signal: AbortSignal;
  /** The execution's context (plan id, policy, bound resources, …). */
  readonly context: ToolExecutionContext;
  /** Reports progress to the caller of `runtime.execute`, when it asked for it. */
  readonly onProgress?: (progress: ToolProgress) => void;
}

/** A plain (async) function a tool can be made of. */
export type ToolFunction<Input, Output> = (input: Input, context: FunctionToolContext) => Output | Promise<Output>;

/** Options of {@link fromFunction}. */
export interface FromFunctionOptions extends ForeignToolOptions {
  /** Name of the tool; must satisfy `isValidToolName`. */
  readonly name: string;
  /** What the tool does, for a model and a person. */
  readonly description: string;
  /** JSON Schema of the input; none means the runtime checks nothing. */
  readonly inputSchema?: JsonSchema;
  /** JSON Schema of the output. */
  readonly outputSchema?: JsonSchema;
}

/**
 * Makes a `ToolInstance` (source kind `'wrapped'`, `annotations.foreignKind:
 * 'function'`) of a plain function `(input, { signal }) => output`. What the
 * function returns is the output of a success; what it throws becomes
 * `ToolExecutionError` in the runtime.
 *
 * @example
 * const add = fromFunction(async ({ a, b }: { a: number; b: number }) => a + b, {
 *   name: 'math.add',
 *   description: 'Adds two numbers.',
 *   inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
 *   capability: { writes: false, idempotent: true, openWorld: false },
 * });
 *
 * @throws WrappedToolError (`WRAP_FOREIGN_TOOL_INVALID`, `WRAP_INVALID_OPTIONS`, `WRAP_SCHEMA_INVALID`).
 */
export function fromFunction<Input = unknown, Output = unknown>(fn: ToolFunction<Input, Output>, options: FromFunctionOptions): ToolInstance<Input, Output> {
  if (typeof fn !== 'function') throw new WrappedToolError({ problem: 'not-callable', call: 'fromFunction', received: fn });
  const safe = (typeof options === 'object' && options !== null ? options : {}) as Partial<FromFunctionOptions>;
  return buildForeignTool({
    kind: 'function',
    library: 'function',
    name: safe.name,
    description: safe.description,
    inputSchema: safe.inputSchema,
    outputSchema: safe.outputSchema,
    options: options,
    run: async (input, ctx, callOptions) =>
      fn(input as Input, {
        signal: ctx.cancellationToken.signal,
        context: ctx,
        ...(callOptions?.onProgress === undefined ? {} : { onProgress: callOptions.onProgress }),
      }),
  }) as ToolInstance<Input, Output>;
}

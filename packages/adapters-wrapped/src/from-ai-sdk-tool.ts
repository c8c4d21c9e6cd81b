import type { JsonSchema } from '@ca/domain';
import { createExecutionId } from '@ca/tool-context';
import type { ToolInstance } from '@ca/tool-lifecycle';
import { toJsonSchema, type JsonSchemaConverter } from './foreign-schema';
import { buildForeignTool, type ForeignToolOptions } from './foreign-tool';
import { isPlainObject } from './support';
import { WrappedToolError } from './wrapped-tool-error';

/** The options the AI SDK passes to a tool's `execute` (structural copy of `ToolExecutionOptions`). */
export interface AiSdkToolExecutionOptions {
  readonly toolCallId: string;
  readonly messages: readonly unknown[];
  readonly abortSignal?: AbortSignal;
  readonly experimental_context?: unknown;
}

/**
 * The shape of a Vercel AI SDK tool (`tool({ description, inputSchema, execute })`
 * from `ai`), as far as this package needs it. Structural: `ai` is not imported.
 */
export interface AiSdkToolLike {
  /** ai 7 also takes a function of the call's context: it is not called (pass `options.description`). */
  readonly description?: string | ((options: never) => string);
  readonly title?: string;
  /** A zod schema, `jsonSchema(...)`, `zodSchema(...)`, a lazy schema, or a Standard Schema. */
  readonly inputSchema: unknown;
  readonly outputSchema?: unknown;
  readonly needsApproval?: unknown;
  /** May return the output, a promise of it, or an async iterable of preliminary outputs whose last one is final. */
  execute?(input: never, options: AiSdkToolExecutionOptions): unknown;
}

/** Options of {@link fromAiSdkTool}. */
export interface FromAiSdkToolOptions extends ForeignToolOptions {
  /** Description; default the tool's. */
  readonly description?: string;
  /** JSON Schema of the input, instead of converting the tool's `inputSchema`. */
  readonly inputSchema?: JsonSchema;
  /** JSON Schema of the output, instead of converting the tool's `outputSchema`. */
  readonly outputSchema?: JsonSchema;
  /** Converts a schema this package cannot convert itself (e.g. a raw zod 3 schema). */
  readonly toJsonSchema?: JsonSchemaConverter;
  /** `messages` passed to `execute` (default `[]`: the runtime has no conversation). */
  readonly messages?: readonly unknown[];
  /** `experimental_context` passed to `execute`. */
  readonly experimentalContext?: unknown;
}

/**
 * Makes a `ToolInstance` (source kind `'wrapped'`, `annotations.foreignKind:
 * 'ai-sdk'`) of a Vercel AI SDK tool. `execute` gets
 * `{ toolCallId: ctx.executionId, messages, abortSignal }` with the plan's
 * signal; an async-iterable result is drained and its last value is the output.
 * The AI SDK's own input validation does not run; the runtime validates against
 * the converted JSON Schema instead. `needsApproval` is not enforced (it is
 * recorded as `annotations.needsApproval`).
 *
 * @param name - The tool's name in the runtime (AI SDK tools are named by their key in a `tools` record).
 * @throws WrappedToolError (`WRAP_FOREIGN_TOOL_INVALID` for a tool without `execute`,
 *   `WRAP_SCHEMA_UNCONVERTIBLE`, `WRAP_INVALID_OPTIONS`, `WRAP_SCHEMA_INVALID`).
 */
export function fromAiSdkTool(name: string, tool: AiSdkToolLike, options: FromAiSdkToolOptions): ToolInstance {
  if (!isPlainObject(tool) || typeof tool.execute !== 'function') {
    throw new WrappedToolError({ problem: 'not-callable', call: 'fromAiSdkTool', received: tool, ...(typeof name === 'string' ? { toolName: name } : {}) });
  }
  const safe = (isPlainObject(options) ? options : {}) as Partial<FromAiSdkToolOptions>;
  const toolName = typeof name === 'string' ? name : String(name);
  const inputSchema = safe.inputSchema ?? toJsonSchema(tool.inputSchema, { toolName, direction: 'input', library: 'AI SDK' }, safe.toJsonSchema);
  const outputSchema =
    safe.outputSchema ??
    (tool.outputSchema === undefined ? undefined : toJsonSchema(tool.outputSchema, { toolName, direction: 'output', library: 'AI SDK' }, safe.toJsonSchema));
  const execute = tool.execute.bind(tool) as (input: unknown, executionOptions: AiSdkToolExecutionOptions) => unknown;
  const messages = safe.messages ?? [];
  const needsApproval = tool.needsApproval === true || typeof tool.needsApproval === 'function';
  return buildForeignTool({
    kind: 'ai-sdk',
    library: 'AI SDK',
    name,
    description: safe.description ?? (typeof tool.description === 'string' ? tool.description : undefined),
    inputSchema,
    outputSchema,
    options: {
      ...(options as ForeignToolOptions),
      annotations: {
        ...(typeof tool.title === 'string' ? { title: tool.title } : {}),
        ...(needsApproval ? { needsApproval: true } : {}),
        ...safe.annotations,
      },
    },
    run: async (input, ctx) => {
      const signal = ctx.cancellationToken.signal;
      const produced = execute(input, {
        toolCallId: ctx.executionId ?? createExecutionId(),
        messages,
        abortSignal: signal,
        ...(safe.experimentalContext === undefined ? {} : { experimental_context: safe.experimentalContext }),
      });
      if (!isAsyncIterable(produced)) return await produced;
      let last: unknown;
      for await (const value of produced) {
        last = value;
        // Stop pulling preliminary results once cancelled; `for await` closes the iterator.
        if (signal.aborted) throw signal.reason;
      }
      return last;
    },
  });
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as Record<symbol, unknown>)[Symbol.asyncIterator] === 'function';
}

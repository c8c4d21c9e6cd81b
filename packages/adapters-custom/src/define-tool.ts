import type { ToolCapabilityInput } from '@ca/domain';
import type { ToolExecutionContext } from '@ca/tool-context';
import type { ToolCallOptions, ToolInstance, ToolResult } from '@ca/tool-lifecycle';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { buildCustomTool, defaultValidator, type CustomToolFields } from './build-custom-tool';

/**
 * The type of the values a JSON Schema accepts (via `json-schema-to-ts`), or
 * `unknown` when there is no schema. Write schemas inline in `defineTool`, or
 * declare them `as const`, so their literal types are kept.
 */
export type SchemaType<Schema> = [Schema] extends [JSONSchema] ? FromSchema<Schema> : unknown;

/**
 * What `execute` of a custom tool may return: the bare output (wrapped into
 * `{ ok: true, output }`), or a full `ToolResult` (to report `changes`,
 * `content`, `metadata`, or an expected failure with `toolFailure(error)`).
 * A value counts as a `ToolResult` when it is an object with `ok: true` and an
 * `output` key, or `ok: false` and an `error` key.
 */
export type CustomToolReturn<Output> = Output | ToolResult<Output> | Promise<Output | ToolResult<Output>>;

/**
 * The definition given to {@link defineTool}. `Input` and `Output` are inferred
 * from `inputSchema` and `outputSchema`.
 */
export interface ToolDefinition<InputSchema = JSONSchema, Input = unknown, OutputSchema = undefined, Output = unknown> {
  /** Name of the tool, used as given; must satisfy `isValidToolName`. A namespace such as `custom.<team>.<tool>` is recommended. */
  readonly name: string;
  /** What the tool does, for a model and a person. */
  readonly description: string;
  /** JSON Schema (draft 2020-12 unless `$schema` says otherwise) of the input; compiled when the tool is defined. */
  readonly inputSchema: InputSchema;
  /** JSON Schema of the output; a mismatch is logged, or fails the result with `strictOutput`. */
  readonly outputSchema?: OutputSchema;
  /**
   * What the tool may do; required. Fields left out fall on the conservative
   * side (`writes: true`, `checkpointable: false`, …; see `normalizeCapability`).
   * Unknown fields and non-boolean values are refused.
   */
  readonly capability: ToolCapabilityInput;
  /** Default deadline of one execution, in ms. */
  readonly timeoutMs?: number;
  /** Fail the result (rather than log a warning) when the output does not match `outputSchema`. */
  readonly strictOutput?: boolean;
  /** Version of the tool. */
  readonly version?: string;
  /** Free-form JSON-serialisable annotations, copied into the descriptor. */
  readonly annotations?: Readonly<Record<string, unknown>>;
  /** Prepares the tool for one plan (at most once per plan). */
  activate?(ctx: ToolExecutionContext): Promise<void> | void;
  /**
   * Runs the tool. Pass `ctx.cancellationToken.signal` to anything that waits.
   * Return the output, or a `ToolResult`; throw only for unexpected failures
   * (the runtime turns them into `ToolExecutionError`).
   */
  execute(input: Input, ctx: ToolExecutionContext, options?: ToolCallOptions): CustomToolReturn<Output>;
  /** Releases what `activate` acquired for the plan. */
  deactivate?(ctx: ToolExecutionContext): Promise<void> | void;
}

/**
 * Defines a custom tool from a JSON Schema and a function; the input (and
 * output) types are inferred from the schemas.
 *
 * @example
 * const greet = defineTool({
 *   name: 'custom.greet',
 *   description: 'Greets someone.',
 *   inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
 *   capability: { writes: false, checkpointable: true, openWorld: false },
 *   execute: async ({ name }) => `Hello, ${name}!`, // name: string
 * });
 *
 * @returns A frozen `ToolInstance` with source kind `'custom'`; serve it with `createCustomAdapter({ tools: [greet] })`.
 * @throws CustomToolRegistrationError (`CUSTOM_TOOL_INVALID`) when the name is
 *   not a valid tool name, the description is empty, the capability is missing
 *   or has unknown fields, a schema does not compile, or `execute` is missing.
 */
export function defineTool<
  const InputSchema extends JSONSchema,
  const OutputSchema extends JSONSchema | undefined = undefined,
  Input = FromSchema<InputSchema>,
  Output = SchemaType<OutputSchema>,
>(definition: ToolDefinition<InputSchema, Input, OutputSchema, NoInfer<Output>>): ToolInstance<Input, Output> {
  return buildCustomTool(definition as unknown as CustomToolFields, 'defineTool', defaultValidator()) as ToolInstance<Input, Output>;
}

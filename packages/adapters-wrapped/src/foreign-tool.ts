import { isValidToolName, type JsonSchema, type ToolCapabilityInput } from '@ca/domain';
import type { SchemaValidator } from '@ca/schema';
import type { ToolExecutionContext } from '@ca/tool-context';
import type { ToolCallOptions, ToolDescriptor, ToolInstance } from '@ca/tool-lifecycle';
import { capabilityOf, checkTimeout, compileSchema, defaultValidator, invalidOption, isPlainObject } from './support';
import { WrappedToolError, type WrapSubject } from './wrapped-tool-error';

/** Which kind of foreign tool an adapter made; recorded as `annotations.foreignKind`. */
export type ForeignToolKind = 'function' | 'ai-sdk' | 'langchain';

/** Options shared by every foreign-tool adapter. */
export interface ForeignToolOptions {
  /**
   * What the tool may do. Foreign tools declare nothing, so say it here;
   * fields left out (and a missing capability) fall on the conservative
   * side: it writes, is not checkpointable, reaches an open world.
   */
  readonly capability: ToolCapabilityInput;
  /** Default deadline of one execution, in ms. */
  readonly timeoutMs?: number;
  /** Fail results whose output does not match the output schema. */
  readonly strictOutput?: boolean;
  /** Version of the tool. */
  readonly version?: string;
  /** Free-form JSON-serialisable annotations (`foreignKind` is always set). */
  readonly annotations?: Readonly<Record<string, unknown>>;
  /** Compiles the schemas when the tool is built (injectable for tests); default a shared `createSchemaValidator()`. */
  readonly schemaValidator?: SchemaValidator;
}

/** What {@link buildForeignTool} needs. */
export interface ForeignToolParts {
  readonly kind: ForeignToolKind;
  readonly library: string;
  readonly name: unknown;
  readonly description: unknown;
  readonly inputSchema: JsonSchema | undefined;
  readonly outputSchema: JsonSchema | undefined;
  readonly options: ForeignToolOptions;
  readonly run: (input: unknown, ctx: ToolExecutionContext, callOptions: ToolCallOptions | undefined) => Promise<unknown>;
}

/**
 * A `ToolInstance` of source kind `'wrapped'` around a foreign callable. Its
 * output is always wrapped as `{ ok: true, output }`; whatever it throws
 * becomes `ToolExecutionError` in the runtime.
 * @throws WrappedToolError (`WRAP_FOREIGN_TOOL_INVALID`, `WRAP_INVALID_OPTIONS`, `WRAP_SCHEMA_INVALID`).
 */
export function buildForeignTool(parts: ForeignToolParts): ToolInstance {
  const { kind, library, name, description, inputSchema, outputSchema, options, run } = parts;
  if (!isValidToolName(name)) throw new WrappedToolError({ problem: 'invalid-foreign-name', library, received: name });
  if (typeof description !== 'string' || description.trim().length === 0) throw new WrappedToolError({ problem: 'no-description', library, toolName: name });
  const subject: WrapSubject = { library, toolName: name };
  if (!isPlainObject(options)) invalidOption(subject, 'options', 'an object with at least { capability }', options);
  const capability = capabilityOf(options.capability, subject);
  const timeoutMs = checkTimeout(options.timeoutMs, subject);
  if (options.strictOutput !== undefined && typeof options.strictOutput !== 'boolean')
    invalidOption(subject, 'strictOutput', 'true or false', options.strictOutput);
  if (options.version !== undefined && typeof options.version !== 'string') invalidOption(subject, 'version', 'a string', options.version);
  if (options.annotations !== undefined && !isPlainObject(options.annotations)) invalidOption(subject, 'annotations', 'a plain object', options.annotations);
  const validator = options.schemaValidator ?? defaultValidator();
  if (inputSchema !== undefined) compileSchema(validator, inputSchema, 'input', { toolName: name });
  if (outputSchema !== undefined) compileSchema(validator, outputSchema, 'output', { toolName: name });
  const descriptor: ToolDescriptor = Object.freeze({
    name,
    description,
    source: 'wrapped',
    capability,
    ...(inputSchema === undefined ? {} : { inputSchema }),
    ...(outputSchema === undefined ? {} : { outputSchema }),
    ...(options.strictOutput === undefined ? {} : { strictOutput: options.strictOutput }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(options.version === undefined ? {} : { version: options.version }),
    annotations: Object.freeze({ ...options.annotations, foreignKind: kind }),
  });
  return Object.freeze({
    descriptor,
    execute: async (input: unknown, ctx: ToolExecutionContext, callOptions?: ToolCallOptions) => ({
      ok: true as const,
      output: await run(input, ctx, callOptions),
    }),
  });
}

import { isValidToolName, normalizeCapability, type JsonSchema, type ToolCapabilityInput } from '@ca/domain';
import { SchemaCompileError, createSchemaValidator, type SchemaValidator } from '@ca/schema';
import type { ToolExecutionContext } from '@ca/tool-context';
import type { ToolCallOptions, ToolDescriptor, ToolInstance, ToolResult } from '@ca/tool-lifecycle';
import { CustomToolRegistrationError } from './custom-tool-registration-error';

/** The fields every custom tool declares, whether from `defineTool` or a class. */
export interface CustomToolFields {
  readonly name: string;
  readonly description: string;
  readonly capability: ToolCapabilityInput;
  readonly inputSchema?: unknown;
  readonly outputSchema?: unknown;
  readonly timeoutMs?: number;
  readonly strictOutput?: boolean;
  readonly version?: string;
  readonly annotations?: Readonly<Record<string, unknown>>;
  activate?(ctx: ToolExecutionContext): unknown;
  execute(input: unknown, ctx: ToolExecutionContext, options?: ToolCallOptions): unknown;
  deactivate?(ctx: ToolExecutionContext): unknown;
}

/** Where a definition comes from, for messages. */
export type DefinitionOrigin = 'defineTool' | 'class' | 'instance';

const CAPABILITY_FIELDS: readonly string[] = ['writes', 'checkpointable', 'idempotent', 'destructive', 'openWorld'];
const MAX_TIMEOUT_MS = 2_147_483_647;

const builtTools = new WeakSet<object>();
let sharedValidator: SchemaValidator | undefined;

/** The validator used when none is given: one per process, created on first use. */
export function defaultValidator(): SchemaValidator {
  sharedValidator ??= createSchemaValidator();
  return sharedValidator;
}

/** True for instances made by {@link buildCustomTool} (already checked). */
export function isBuiltCustomTool(value: unknown): value is ToolInstance {
  return typeof value === 'object' && value !== null && builtTools.has(value);
}

/**
 * Checks a custom tool's fields and returns its frozen descriptor.
 * @throws CustomToolRegistrationError (`CUSTOM_TOOL_INVALID`) naming the tool and what to fix.
 */
export function checkCustomTool(
  fields: unknown,
  origin: DefinitionOrigin,
  validator: SchemaValidator,
  sourceId?: string,
): ToolDescriptor {
  const where = origin === 'defineTool' ? 'defineTool()' : origin === 'class' ? 'class-based custom tool' : 'custom tool instance';
  if (typeof fields !== 'object' || fields === null) {
    throw invalid(undefined, sourceId, `${where} expects an object with name, description, capability and execute; got ${describe(fields)}.`);
  }
  const definition = fields as Partial<Record<keyof CustomToolFields, unknown>>;
  const { name } = definition;
  if (!isValidToolName(name)) {
    throw invalid(
      undefined,
      sourceId,
      `A ${where} has the name ${describe(name)}, which is not a valid tool name: use 1–200 letters, digits, '_', '.', ':' or '-', ` +
        `starting with a letter, digit or '_'. A namespace such as 'custom.<team>.<tool>' keeps it unique across sources.`,
    );
  }
  const fail = (message: string, cause?: unknown): never => {
    throw invalid(name, sourceId, `Custom tool '${name}' ${message}`, cause);
  };
  if (typeof definition.description !== 'string' || definition.description.trim().length === 0) {
    fail(`needs a non-empty description (what it does, for a model and a person); got ${describe(definition.description)}.`);
  }
  checkCapability(definition.capability, fail);
  if (typeof definition.execute !== 'function') fail(`needs an execute(input, ctx) function; got ${describe(definition.execute)}.`);
  for (const method of ['activate', 'deactivate'] as const) {
    if (definition[method] !== undefined && typeof definition[method] !== 'function') {
      fail(`has a ${method} that is not a function (got ${describe(definition[method])}); make it a function or leave it out.`);
    }
  }
  const { timeoutMs, strictOutput, version, annotations, inputSchema, outputSchema } = definition;
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS)) {
    fail(`has timeoutMs ${describe(timeoutMs)}; use a positive number of milliseconds (at most ${MAX_TIMEOUT_MS}) or leave it out.`);
  }
  if (strictOutput !== undefined && typeof strictOutput !== 'boolean') fail(`has strictOutput ${describe(strictOutput)}; use true, false or leave it out.`);
  if (version !== undefined && typeof version !== 'string') fail(`has version ${describe(version)}; use a string such as '1.2.0' or leave it out.`);
  if (annotations !== undefined && (typeof annotations !== 'object' || annotations === null || Array.isArray(annotations))) {
    fail(`has annotations ${describe(annotations)}; use a plain JSON-serialisable object or leave them out.`);
  }
  if (origin === 'defineTool' && inputSchema === undefined) {
    fail(`needs an inputSchema (a JSON Schema; { type: 'object', properties: {} } for a tool without arguments).`);
  }
  for (const [direction, schema] of [['input', inputSchema], ['output', outputSchema]] as const) {
    if (schema === undefined) continue;
    try {
      validator.compile(schema as JsonSchema, { toolName: name, direction, trust: 'trusted' });
    } catch (error) {
      const detail = SchemaCompileError.isInstance(error) ? error.message : error instanceof Error ? error.message : String(error);
      fail(`has an ${direction}Schema that cannot be compiled: ${detail} Fix the ${direction}Schema and register the tool again.`, error);
    }
  }
  const descriptor: ToolDescriptor = {
    name,
    description: definition.description as string,
    source: 'custom',
    capability: normalizeCapability(definition.capability),
    ...(inputSchema === undefined ? {} : { inputSchema: inputSchema as JsonSchema }),
    ...(outputSchema === undefined ? {} : { outputSchema: outputSchema as JsonSchema }),
    ...(strictOutput === undefined ? {} : { strictOutput: strictOutput as boolean }),
    ...(timeoutMs === undefined ? {} : { timeoutMs: timeoutMs as number }),
    ...(version === undefined ? {} : { version: version as string }),
    ...(annotations === undefined ? {} : { annotations: Object.freeze({ ...(annotations as Record<string, unknown>) }) }),
  };
  return Object.freeze(descriptor);
}

/**
 * Turns checked fields (a `defineTool` definition or a class instance) into a
 * frozen {@link ToolInstance}. Methods are called on `fields`, so `this` inside
 * them is the definition or the class instance.
 * @throws CustomToolRegistrationError (`CUSTOM_TOOL_INVALID`).
 */
export function buildCustomTool(
  fields: CustomToolFields,
  origin: DefinitionOrigin,
  validator: SchemaValidator,
  sourceId?: string,
): ToolInstance {
  const descriptor = checkCustomTool(fields, origin, validator, sourceId);
  const instance: { -readonly [K in keyof ToolInstance]: ToolInstance[K] } = {
    descriptor,
    execute: async (input, ctx, options) => toToolResult(await fields.execute(input, ctx, options)),
  };
  // Only tools that declare activate/deactivate get them, so the runtime skips the step for the others.
  if (fields.activate !== undefined) {
    instance.activate = async (ctx) => {
      await fields.activate?.(ctx);
    };
  }
  if (fields.deactivate !== undefined) {
    instance.deactivate = async (ctx) => {
      await fields.deactivate?.(ctx);
    };
  }
  const frozen = Object.freeze(instance);
  builtTools.add(frozen);
  return frozen;
}

/**
 * A value `execute` returned, as a ToolResult: a value shaped like a result
 * (`{ ok: true, output }` or `{ ok: false, error }`) is kept, anything else is
 * the output of a success.
 */
export function toToolResult(value: unknown): ToolResult {
  if (typeof value === 'object' && value !== null) {
    const ok = (value as { ok?: unknown }).ok;
    if ((ok === true && 'output' in value) || (ok === false && 'error' in value)) return value as ToolResult;
  }
  return { ok: true, output: value };
}

function checkCapability(capability: unknown, fail: (message: string) => never): void {
  if (typeof capability !== 'object' || capability === null || Array.isArray(capability)) {
    fail(
      `needs a capability saying what it may do, e.g. { writes: false } for a tool that only reads; got ${describe(capability)}. ` +
        'Fields left out fall on the conservative side (writes, not checkpointable).',
    );
  }
  for (const [key, value] of Object.entries(capability as Record<string, unknown>)) {
    if (!CAPABILITY_FIELDS.includes(key)) {
      fail(`has an unknown capability field '${key}'; the fields are ${CAPABILITY_FIELDS.join(', ')} (check the spelling).`);
    }
    if (value !== undefined && typeof value !== 'boolean') {
      fail(`has capability.${key} = ${describe(value)}; use true or false (or leave it out for the conservative default).`);
    }
  }
}

function invalid(toolName: string | undefined, sourceId: string | undefined, message: string, cause?: unknown): CustomToolRegistrationError {
  return new CustomToolRegistrationError({
    code: 'CUSTOM_TOOL_INVALID',
    message,
    ...(toolName === undefined ? {} : { toolName }),
    ...(sourceId === undefined ? {} : { sourceId }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/** A short description of any value for messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return `'${value.length > 60 ? `${value.slice(0, 60)}…` : value}'`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return `${typeof value} ${String(value)}`;
}

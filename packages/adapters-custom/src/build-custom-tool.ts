import { isValidToolName, normalizeCapability, type JsonSchema, type ToolCapabilityInput } from '@ca/domain';
import { createSchemaValidator, type SchemaValidator } from '@ca/schema';
import type { ToolExecutionContext } from '@ca/tool-context';
import type { ToolCallOptions, ToolDescriptor, ToolInstance, ToolResult } from '@ca/tool-lifecycle';
import { CAPABILITY_FIELDS, CustomToolRegistrationError, MAX_TIMEOUT_MS, type CustomToolField, type CustomToolOrigin } from './custom-tool-registration-error';

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
export function checkCustomTool(fields: unknown, origin: CustomToolOrigin, validator: SchemaValidator, sourceId?: string): ToolDescriptor {
  const where = sourceId === undefined ? {} : { sourceId };
  if (typeof fields !== 'object' || fields === null) {
    throw new CustomToolRegistrationError({ problem: 'not-an-object', origin, received: fields, ...where });
  }
  const definition = fields as Partial<Record<keyof CustomToolFields, unknown>>;
  const { name } = definition;
  if (!isValidToolName(name)) throw new CustomToolRegistrationError({ problem: 'invalid-name', origin, received: name, ...where });
  const invalid = (field: CustomToolField, received: unknown): never => {
    throw new CustomToolRegistrationError({ problem: 'invalid-field', toolName: name, field, received, ...where });
  };
  if (typeof definition.description !== 'string' || definition.description.trim().length === 0) invalid('description', definition.description);
  checkCapability(definition.capability, name, where);
  if (typeof definition.execute !== 'function') invalid('execute', definition.execute);
  for (const method of ['activate', 'deactivate'] as const) {
    if (definition[method] !== undefined && typeof definition[method] !== 'function') invalid(method, definition[method]);
  }
  const { timeoutMs, strictOutput, version, annotations, inputSchema, outputSchema } = definition;
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= MAX_TIMEOUT_MS)) {
    invalid('timeoutMs', timeoutMs);
  }
  if (strictOutput !== undefined && typeof strictOutput !== 'boolean') invalid('strictOutput', strictOutput);
  if (version !== undefined && typeof version !== 'string') invalid('version', version);
  if (annotations !== undefined && (typeof annotations !== 'object' || annotations === null || Array.isArray(annotations))) invalid('annotations', annotations);
  if (origin === 'defineTool' && inputSchema === undefined) invalid('inputSchema', inputSchema);
  for (const [direction, schema] of [
    ['input', inputSchema],
    ['output', outputSchema],
  ] as const) {
    if (schema === undefined) continue;
    try {
      validator.compile(schema as JsonSchema, { toolName: name, direction, trust: 'trusted' });
    } catch (error) {
      throw new CustomToolRegistrationError({ problem: 'schema-not-compiled', toolName: name, direction, cause: error, ...where });
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
export function buildCustomTool(fields: CustomToolFields, origin: CustomToolOrigin, validator: SchemaValidator, sourceId?: string): ToolInstance {
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

function checkCapability(capability: unknown, toolName: string, where: { readonly sourceId?: string }): void {
  if (typeof capability !== 'object' || capability === null || Array.isArray(capability)) {
    throw new CustomToolRegistrationError({ problem: 'invalid-field', toolName, field: 'capability', received: capability, ...where });
  }
  for (const [field, value] of Object.entries(capability as Record<string, unknown>)) {
    if (!CAPABILITY_FIELDS.includes(field)) throw new CustomToolRegistrationError({ problem: 'unknown-capability-field', toolName, field, ...where });
    if (value !== undefined && typeof value !== 'boolean') {
      throw new CustomToolRegistrationError({ problem: 'invalid-capability-value', toolName, field, received: value, ...where });
    }
  }
}

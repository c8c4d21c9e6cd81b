import { isCapabilityAtLeastAsStrict, isValidToolName, normalizeCapability, type JsonSchema, type ToolCapability } from '@ca/domain';
import { ToolSchemaValidationError, type SchemaIssue, type SchemaValidator } from '@ca/schema';
import { ToolCancelledError, type CancellationToken, type ToolExecutionContext } from '@ca/tool-context';
import type { ToolCallOptions, ToolDescriptor, ToolFailure, ToolInstance, ToolResult } from '@ca/tool-lifecycle';
import { CAPABILITY_FIELDS, checkCapabilityInput, checkTimeout, compileSchema, defaultValidator, invalidOption, isPlainObject } from './support';
import { WrappedToolError, type WrapSubject } from './wrapped-tool-error';

/** The rest of a wrapped call, as a middleware sees it: call it to run the tool. */
export type WrapExecuteNext = (input: unknown, ctx: ToolExecutionContext, options?: ToolCallOptions) => Promise<ToolResult>;

/**
 * A middleware around a wrapped tool's execution: it sees the input as the
 * caller gave it and the result the caller will get, and may change either,
 * skip the call, or call `next` more than once.
 */
export type WrapExecuteMiddleware = (next: WrapExecuteNext, input: unknown, ctx: ToolExecutionContext, options?: ToolCallOptions) => Promise<ToolResult>;

/** One failed attempt, as {@link RetryOptions.retryOn} sees it. */
export interface RetryFailure {
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  /** What the tool threw, or the `error` of the failed result it returned. */
  readonly error: unknown;
  /** The failed result, when the tool returned one rather than throwing. */
  readonly result?: ToolFailure;
}

/** Retry of a wrapped tool; allowed only for tools whose capability is `idempotent`. */
export interface RetryOptions {
  /** Total number of attempts, the first included: an integer from 1 to 100. */
  readonly attempts: number;
  /**
   * Wait before each retry, in ms: a number (the same wait every time) or a
   * function of the attempt that failed (from 1), e.g. `(n) => 100 * 2 ** (n - 1)`.
   * Default 100. Cancelling the plan during the wait stops at once.
   */
  readonly backoffMs?: number | ((attempt: number) => number);
  /**
   * Whether to retry after a failure. Default: retry when the tool threw,
   * not when it returned a failed result (an expected failure, which a retry
   * would not change). Never consulted after cancellation.
   */
  readonly retryOn?: (failure: RetryFailure) => boolean;
}

/** Options of {@link wrapTool}; all optional. */
export interface WrapToolOptions<Input = unknown, InnerInput = unknown, InnerOutput = unknown, Output = InnerOutput> {
  /** New name of the wrapper; default the inner tool's name. */
  readonly name?: string;
  /** Prefix joined with a dot: `namespace.name` (e.g. `'team'` → `team.mcp.fs.read`). */
  readonly namespace?: string;
  /** New description; default the inner tool's. */
  readonly description?: string;
  /** New version; default the inner tool's. */
  readonly version?: string;
  /** Annotations merged over the inner tool's (`wrappedSource` and `wrappedName` are always set by the wrapper). */
  readonly annotations?: Readonly<Record<string, unknown>>;
  /**
   * Capability changes, merged over the inner tool's capability. They may
   * only make it stricter (declare `writes`, `destructive` or `openWorld`;
   * drop `checkpointable` or `idempotent`); loosening one is refused with
   * `WRAP_CAPABILITY_LOOSENED`.
   */
  readonly capability?: Partial<ToolCapability>;
  /**
   * Arguments always sent to the inner tool, merged over the input; they are
   * removed from the wrapper's `inputSchema` (properties and required), so a
   * model cannot set them.
   */
  readonly fixedArguments?: Readonly<Record<string, unknown>>;
  /**
   * Arguments sent when the input leaves them out, merged under the input;
   * they are no longer required by the wrapper's `inputSchema` and carry a `default`.
   */
  readonly defaultArguments?: Readonly<Record<string, unknown>>;
  /**
   * The wrapper's input schema. Default: the inner tool's, less fixed
   * arguments. Give one when `mapInput` changes the shape of the input.
   */
  readonly inputSchema?: JsonSchema;
  /** Turns the wrapper's input into the inner tool's input (before fixed and default arguments are merged). */
  readonly mapInput?: (input: Input, ctx: ToolExecutionContext) => InnerInput | Promise<InnerInput>;
  /** Turns the output of a successful inner result into the wrapper's output. */
  readonly mapOutput?: (output: InnerOutput, ctx: ToolExecutionContext) => Output | Promise<Output>;
  /** The wrapper's output schema. Default: the inner tool's without `mapOutput`, none with it. */
  readonly outputSchema?: JsonSchema;
  /** Fail results whose output does not match the output schema; default the inner tool's setting. */
  readonly strictOutput?: boolean;
  /** Deadline of one execution of the wrapper (all attempts together), in ms; the runtime enforces it. */
  readonly timeoutMs?: number;
  /** Retry failed attempts (idempotent tools only). */
  readonly retry?: RetryOptions;
  /** Middleware around each execution; an array is applied outermost first. */
  readonly wrapExecute?: WrapExecuteMiddleware | readonly WrapExecuteMiddleware[];
  /** Compiles the schemas when wrapping (injectable for tests); default a shared `createSchemaValidator()`. */
  readonly schemaValidator?: SchemaValidator;
}

const MAX_ATTEMPTS = 100;
const TOOL_NAME_RULE = "a valid tool name (1–200 letters, digits, '_', '.', ':' or '-')";

/** A wrapper and the tool it wraps, named in its errors. */
interface WrapperNames {
  readonly toolName: string;
  readonly wrappedToolName: string;
}
const DEFAULT_BACKOFF_MS = 100;

/**
 * Wraps any `ToolInstance` into a new one of source kind `'wrapped'`: renamed
 * or namespaced, with another description, fixed or default arguments, input
 * and output mapping, a deadline, retry, middleware, and a stricter
 * capability. The inner tool is not changed; wrapping a wrapped tool composes.
 *
 * A call runs: middlewares (outermost first) → `mapInput` → default and fixed
 * arguments → check against the inner tool's `inputSchema` (when the input
 * was changed) → the inner tool (with retry) → `mapOutput` (success only).
 * `activate` and `deactivate` are the inner tool's, called with the same context.
 *
 * @example
 * const safeRead = wrapTool(readFile, {
 *   namespace: 'team',
 *   fixedArguments: { encoding: 'utf8' },
 *   capability: { openWorld: true },
 * });
 *
 * @throws WrappedToolError — `WRAP_INVALID_OPTIONS`, `WRAP_CAPABILITY_LOOSENED`,
 *   `WRAP_RETRY_NOT_IDEMPOTENT`, `WRAP_SCHEMA_INVALID` — when the wrapper cannot be built as asked.
 */
export function wrapTool<Input = unknown, Output = unknown, InnerInput = unknown, InnerOutput = unknown>(
  tool: ToolInstance<InnerInput, InnerOutput>,
  options: WrapToolOptions<Input, InnerInput, InnerOutput, Output> = {},
): ToolInstance<Input, Output> {
  const inner = checkInner(tool);
  const innerDescriptor = inner.descriptor;
  const innerName = innerDescriptor.name;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) invalidOption({ wrappedToolName: innerName }, 'options', 'an object', options);
  const name = wrapperName(innerName, options);
  const subject: WrapperNames = { toolName: name, wrappedToolName: innerName };
  const validator = options.schemaValidator ?? defaultValidator();

  const description = options.description ?? innerDescriptor.description;
  if (typeof description !== 'string') invalidOption(subject, 'description', 'a string', description);
  if (options.version !== undefined && typeof options.version !== 'string') invalidOption(subject, 'version', 'a string', options.version);
  if (options.annotations !== undefined && !isPlainObject(options.annotations)) invalidOption(subject, 'annotations', 'a plain object', options.annotations);
  if (options.strictOutput !== undefined && typeof options.strictOutput !== 'boolean')
    invalidOption(subject, 'strictOutput', 'true or false', options.strictOutput);
  for (const key of ['mapInput', 'mapOutput'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'function') invalidOption(subject, key, 'a function', options[key]);
  }
  const timeoutMs = checkTimeout(options.timeoutMs, subject) ?? innerDescriptor.timeoutMs;
  const capability = wrapperCapability(innerDescriptor.capability, options.capability, subject);
  const retry = checkRetry(options.retry, capability, subject);
  const middlewares = checkMiddlewares(options.wrapExecute, subject);
  const fixed = checkArguments(options.fixedArguments, 'fixedArguments', subject);
  const defaults = checkArguments(options.defaultArguments, 'defaultArguments', subject);
  for (const argument of Object.keys(defaults ?? {})) {
    if (fixed !== undefined && argument in fixed) throw new WrappedToolError({ problem: 'argument-fixed-and-default', subject, argument });
  }
  checkFixedAgainstSchema(innerDescriptor.inputSchema, fixed, defaults, subject);

  const inputSchema = options.inputSchema ?? deriveInputSchema(innerDescriptor.inputSchema, fixed, defaults);
  const outputSchema = options.outputSchema ?? (options.mapOutput === undefined ? innerDescriptor.outputSchema : undefined);
  if (options.inputSchema !== undefined) compileSchema(validator, options.inputSchema, 'input', subject);
  else if (inputSchema !== undefined && inputSchema !== innerDescriptor.inputSchema) compileSchema(validator, inputSchema, 'derived-input', subject);
  if (options.outputSchema !== undefined) compileSchema(validator, options.outputSchema, 'output', subject);
  const changesInput = options.mapInput !== undefined || fixed !== undefined || defaults !== undefined || options.inputSchema !== undefined;
  // The runtime validates the wrapper's input only; an input the wrapper changed is checked against the inner tool's own schema.
  const innerInputCheck =
    changesInput && innerDescriptor.inputSchema !== undefined ? compileSchema(validator, innerDescriptor.inputSchema, 'inner-input', subject) : undefined;

  const strictOutput = options.strictOutput ?? innerDescriptor.strictOutput;
  const descriptor: ToolDescriptor = Object.freeze({
    name,
    description,
    source: 'wrapped',
    capability,
    // The inner tool's programs still run in the sandbox the plan configures: in each plan the wrapper's capability
    // follows from its own (stricter or equal) one as the inner tool's does (capabilityInPlan).
    ...(innerDescriptor.sandboxed === undefined ? {} : { sandboxed: Object.freeze({ overlay: innerDescriptor.sandboxed.overlay === true }) }),
    ...(inputSchema === undefined ? {} : { inputSchema }),
    ...(outputSchema === undefined ? {} : { outputSchema }),
    ...(strictOutput === undefined ? {} : { strictOutput }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...((options.version ?? innerDescriptor.version) === undefined ? {} : { version: options.version ?? innerDescriptor.version }),
    annotations: Object.freeze({
      ...innerDescriptor.annotations,
      ...options.annotations,
      wrappedSource: originalSource(innerDescriptor),
      wrappedName: innerName,
    }),
  });

  const mapInput = options.mapInput as ((input: unknown, ctx: ToolExecutionContext) => unknown) | undefined;
  const mapOutput = options.mapOutput as ((output: unknown, ctx: ToolExecutionContext) => unknown) | undefined;
  const callInner = (input: unknown, ctx: ToolExecutionContext, callOptions?: ToolCallOptions): Promise<ToolResult> =>
    (inner as ToolInstance).execute(input, ctx, callOptions);

  const core: WrapExecuteNext =
    !changesInput && retry === undefined && mapOutput === undefined
      ? callInner
      : async (input, ctx, callOptions) => {
          let innerInput = mapInput === undefined ? input : await mapInput(input, ctx);
          if (fixed !== undefined || defaults !== undefined) {
            if (innerInput === undefined) innerInput = {};
            if (!isPlainObject(innerInput)) {
              return {
                ok: false,
                error: new WrappedToolError({
                  problem: 'input-not-object',
                  toolName: name,
                  planId: ctx.planId,
                  received: innerInput,
                  mapped: mapInput !== undefined,
                }),
              };
            }
            innerInput = { ...defaults, ...innerInput, ...fixed };
          }
          if (innerInputCheck !== undefined) {
            const check = innerInputCheck.validate(innerInput);
            if (!check.valid) return { ok: false, error: innerInputError(check.issues, name, innerName, ctx.planId) };
          }
          let result =
            retry === undefined
              ? await callInner(innerInput, ctx, callOptions)
              : await withRetry(retry, () => callInner(innerInput, ctx, callOptions), ctx, name);
          if (mapOutput !== undefined && isSuccess(result)) result = { ...result, output: await mapOutput(result.output, ctx) };
          return result;
        };
  const run = middlewares.reduceRight<WrapExecuteNext>((next, middleware) => (input, ctx, callOptions) => middleware(next, input, ctx, callOptions), core);

  const wrapped: { -readonly [K in keyof ToolInstance]: ToolInstance[K] } = {
    descriptor,
    execute: (input, ctx, callOptions) => run(input, ctx, callOptions),
  };
  if (typeof inner.activate === 'function') wrapped.activate = (ctx) => (inner as ToolInstance).activate?.(ctx) ?? Promise.resolve();
  if (typeof inner.deactivate === 'function') wrapped.deactivate = (ctx) => (inner as ToolInstance).deactivate?.(ctx) ?? Promise.resolve();
  return Object.freeze(wrapped) as ToolInstance<Input, Output>;
}

function checkInner<I, O>(tool: ToolInstance<I, O>): ToolInstance<I, O> {
  if (typeof tool !== 'object' || tool === null || typeof tool.execute !== 'function' || !isPlainObject(tool.descriptor)) {
    throw new WrappedToolError({ problem: 'not-a-tool', subject: { call: 'wrapTool' }, received: tool });
  }
  if (!isValidToolName(tool.descriptor.name)) invalidOption({ call: 'wrapTool' }, 'tool.descriptor.name', 'a valid tool name', tool.descriptor.name);
  return tool;
}

function wrapperName(innerName: string, options: { readonly name?: unknown; readonly namespace?: unknown }): string {
  const { name, namespace } = options;
  const subject: WrapSubject = { wrappedToolName: innerName };
  if (name !== undefined && !isValidToolName(name)) invalidOption(subject, 'name', TOOL_NAME_RULE, name);
  if (namespace !== undefined && (typeof namespace !== 'string' || !isValidToolName(namespace)))
    invalidOption(subject, 'namespace', `${TOOL_NAME_RULE}, e.g. 'team'`, namespace);
  const base = (name as string | undefined) ?? innerName;
  const full = namespace === undefined ? base : `${namespace as string}.${base}`;
  if (!isValidToolName(full)) throw new WrappedToolError({ problem: 'name-too-long', wrappedToolName: innerName, name: full });
  return full;
}

function wrapperCapability(innerCapability: ToolCapability, change: unknown, subject: WrapperNames): ToolCapability {
  const base = normalizeCapability(innerCapability);
  if (change === undefined) return base;
  const candidate = normalizeCapability({ ...base, ...checkCapabilityInput(change, subject) });
  if (!isCapabilityAtLeastAsStrict(candidate, base)) {
    const loosened = CAPABILITY_FIELDS.filter(
      (field) => candidate[field] !== base[field] && !isCapabilityAtLeastAsStrict({ ...base, [field]: candidate[field] }, base),
    ).map((field) => ({ field, from: base[field], to: candidate[field] }));
    throw new WrappedToolError({ problem: 'capability-loosened', ...subject, loosened });
  }
  return candidate;
}

function checkRetry(retry: unknown, capability: ToolCapability, subject: WrapperNames): RetryOptions | undefined {
  if (retry === undefined) return undefined;
  if (!isPlainObject(retry)) invalidOption(subject, 'retry', 'an object { attempts, backoffMs?, retryOn? }', retry);
  const { attempts, backoffMs, retryOn } = retry as Partial<RetryOptions>;
  if (typeof attempts !== 'number' || !Number.isInteger(attempts) || attempts < 1 || attempts > MAX_ATTEMPTS) {
    invalidOption(subject, 'retry.attempts', `an integer from 1 to ${MAX_ATTEMPTS} (the first attempt included)`, attempts);
  }
  if (backoffMs !== undefined && typeof backoffMs !== 'function' && !(typeof backoffMs === 'number' && Number.isFinite(backoffMs) && backoffMs >= 0)) {
    invalidOption(subject, 'retry.backoffMs', 'a number of milliseconds ≥ 0 or a function of the attempt', backoffMs);
  }
  if (retryOn !== undefined && typeof retryOn !== 'function') invalidOption(subject, 'retry.retryOn', 'a function', retryOn);
  if (!capability.idempotent) {
    throw new WrappedToolError({ problem: 'retry-not-idempotent', ...subject });
  }
  return retry as unknown as RetryOptions;
}

function checkMiddlewares(value: unknown, subject: WrapSubject): readonly WrapExecuteMiddleware[] {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  for (const [index, middleware] of list.entries()) {
    if (typeof middleware !== 'function') {
      invalidOption(subject, `wrapExecute${Array.isArray(value) ? `[${index}]` : ''}`, 'a function (next, input, ctx) => Promise<ToolResult>', middleware);
    }
  }
  return Object.freeze([...list]) as readonly WrapExecuteMiddleware[];
}

function checkArguments(value: unknown, option: string, subject: WrapSubject): Readonly<Record<string, unknown>> | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) invalidOption(subject, option, 'an object of argument values', value);
  return Object.keys(value as object).length === 0 ? undefined : Object.freeze({ ...(value as Record<string, unknown>) });
}

function checkFixedAgainstSchema(
  schema: JsonSchema | undefined,
  fixed: Readonly<Record<string, unknown>> | undefined,
  defaults: Readonly<Record<string, unknown>> | undefined,
  subject: WrapSubject,
): void {
  if (!isPlainObject(schema) || schema.additionalProperties !== false || !isPlainObject(schema.properties)) return;
  const properties = schema.properties;
  for (const [option, values] of [
    ['fixedArguments', fixed],
    ['defaultArguments', defaults],
  ] as const) {
    for (const argument of Object.keys(values ?? {})) {
      if (!Object.prototype.hasOwnProperty.call(properties, argument)) {
        throw new WrappedToolError({ problem: 'unknown-argument', subject, option, argument, accepted: Object.keys(properties) });
      }
    }
  }
}

/**
 * The wrapper's input schema: the inner one with fixed arguments removed
 * from `properties` and `required`, and default arguments no longer required
 * (with a `default` annotation). Only a root-level `properties` is changed;
 * any other schema is kept as it is.
 */
function deriveInputSchema(
  schema: JsonSchema | undefined,
  fixed: Readonly<Record<string, unknown>> | undefined,
  defaults: Readonly<Record<string, unknown>> | undefined,
): JsonSchema | undefined {
  if ((fixed === undefined && defaults === undefined) || !isPlainObject(schema) || !isPlainObject(schema.properties)) return schema;
  const properties: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(schema.properties)) {
    if (fixed !== undefined && key in fixed) continue;
    properties[key] = defaults !== undefined && key in defaults && isPlainObject(property) ? { ...property, default: defaults[key] } : property;
  }
  const derived: Record<string, unknown> = { ...schema, properties };
  if (Array.isArray(schema.required)) {
    const required = schema.required.filter(
      (key: unknown) => !(typeof key === 'string' && ((fixed !== undefined && key in fixed) || (defaults !== undefined && key in defaults))),
    );
    if (required.length > 0) derived.required = required;
    else delete derived.required;
  }
  return Object.freeze(derived);
}

function originalSource(inner: ToolDescriptor): string {
  const recorded = inner.annotations?.['wrappedSource'];
  return inner.source === 'wrapped' && typeof recorded === 'string' ? recorded : inner.source;
}

function innerInputError(issues: readonly SchemaIssue[], name: string, innerName: string, planId: string): ToolSchemaValidationError {
  const shown = issues
    .slice(0, 3)
    .map((issue) => `${issue.message} (keyword ${issue.keyword})`)
    .join('; ');
  return new ToolSchemaValidationError({
    direction: 'input',
    issues,
    toolName: name,
    planId,
    message: `Tool '${name}' (plan '${planId}') built an input that tool '${innerName}' does not accept: ${shown}${issues.length > 3 ? `; and ${issues.length - 3} more issue(s)` : ''}. Fix the wrapper's mapInput, fixedArguments or defaultArguments, or its inputSchema.`,
  });
}

function isSuccess(result: unknown): result is Extract<ToolResult, { ok: true }> {
  return typeof result === 'object' && result !== null && (result as { ok?: unknown }).ok === true;
}

async function withRetry(retry: RetryOptions, attempt: () => Promise<ToolResult>, ctx: ToolExecutionContext, name: string): Promise<ToolResult> {
  const token = ctx.cancellationToken;
  const retryOn = retry.retryOn ?? ((failure: RetryFailure) => failure.result === undefined);
  for (let number = 1; ; number++) {
    let failure: RetryFailure;
    try {
      const result = await attempt();
      if (typeof result !== 'object' || result === null || result.ok !== false || number >= retry.attempts) return result;
      failure = { attempt: number, error: result.error, result };
    } catch (error) {
      if (number >= retry.attempts) throw error;
      failure = { attempt: number, error };
    }
    const cancelled = token.isCancelled || ToolCancelledError.isInstance(failure.error);
    if (cancelled || !retryOn(failure)) {
      if (failure.result !== undefined) return failure.result;
      throw failure.error;
    }
    const backoff = retry.backoffMs ?? DEFAULT_BACKOFF_MS;
    const wait = typeof backoff === 'function' ? backoff(number) : backoff;
    await sleep(Number.isFinite(wait) && wait > 0 ? wait : 0, token, name, ctx.planId);
  }
}

/** Waits `ms`, or rejects with ToolCancelledError as soon as `token` is cancelled; leaves no timer or listener behind. */
function sleep(ms: number, token: CancellationToken, toolName: string, planId: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let unsubscribe = (): void => undefined;
    const timer = setTimeout(() => {
      unsubscribe();
      resolve();
    }, ms);
    unsubscribe = token.onCancel((reason) => {
      clearTimeout(timer);
      reject(new ToolCancelledError({ reason, toolName, planId }));
    });
  });
}

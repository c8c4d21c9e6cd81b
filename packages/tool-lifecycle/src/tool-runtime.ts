import { isToolSourceKind, isValidToolName, normalizeCapability } from '@ca/domain';
import {
  CompiledSchema,
  SchemaCompileError,
  SchemaValidator,
  ToolSchemaValidationError,
  createSchemaValidator,
} from '@ca/schema';
import {
  CancellationToken,
  ToolCancelledError,
  createExecutionContext,
  createExecutionId,
  toTraceError,
  type ToolExecutionContext,
  type ToolExecutionContextOptions,
  type ToolExecutionTrace,
} from '@ca/tool-context';
import type { Span } from '@opentelemetry/api';
import { ToolAccessDeniedError } from './errors/tool-access-denied-error';
import { ToolCheckpointRequiredError } from './errors/tool-checkpoint-required-error';
import { ToolExecutionError } from './errors/tool-execution-error';
import { ToolInvalidArgumentError } from './errors/tool-invalid-argument-error';
import { ToolNotActivatedError } from './errors/tool-not-activated-error';
import { ToolNotFoundError } from './errors/tool-not-found-error';
import { ToolRegistrationError } from './errors/tool-registration-error';
import { ToolRuntimeError } from './errors/tool-runtime-error';
import { ToolLifecycleCache, messageOf, type PlanEndReport, type ToolLifecycleCacheOptions } from './lifecycle-cache';
import { systemClock, type RuntimeClock } from './runtime-clock';
import { createConsoleLogger, type RuntimeLogger } from './runtime-logger';
import { activeTracer, endToolSpan, startToolSpan } from './telemetry';
import type { ToolDescriptor } from './tool-descriptor';
import type { ToolCallOptions, ToolInstance, ToolProgress } from './tool-instance';
import type { ExecutionResult, ToolFailure, ToolResult } from './tool-result';
import type { ToolSource, UnavailableTool } from './tool-source';

/** Settings of a {@link ToolRuntime}. */
export interface ToolRuntimeOptions {
  /**
   * Activate a tool on its first execution in a plan (default `true`). When
   * `false`, executing a tool not activated with `runtime.activate` throws
   * `ToolNotActivatedError`.
   */
  readonly autoActivate?: boolean;
  /** Deadline of every execution whose descriptor and call set none, in ms. */
  readonly defaultTimeoutMs?: number;
  /** How long `endPlan` waits for in-flight executions, in ms (default 5,000). */
  readonly endPlanGraceMs?: number;
  /** How long one `deactivate` may take, in ms (default 10,000). */
  readonly deactivateTimeoutMs?: number;
  /** Fail results whose output does not match `outputSchema`, for every tool. */
  readonly strictOutput?: boolean;
}

/** What a {@link ToolRuntime} is built from; everything but the sources has a default. */
export interface ToolRuntimeSettings {
  readonly sources?: readonly ToolSource[];
  readonly validator?: SchemaValidator;
  readonly logger?: RuntimeLogger;
  readonly clock?: RuntimeClock;
  readonly cache?: ToolLifecycleCache;
  readonly options?: ToolRuntimeOptions;
}

/** Options of one `execute` call. */
export interface ExecuteOptions {
  /** Deadline of this execution in ms; overrides the descriptor's and the runtime's. */
  readonly timeoutMs?: number;
  /** Receives the progress the tool reports. */
  readonly onProgress?: (progress: ToolProgress) => void;
}

/** Options of a plan: those of its context plus a deadline for the whole plan. */
export interface PlanOptions extends ToolExecutionContextOptions {
  /** Cancel the plan (and every execution in it) after this many ms. */
  readonly timeoutMs?: number;
}

/** What `discover` found across every source. */
export interface DiscoveryResult {
  /** Usable tools, sorted by name. */
  readonly tools: readonly ToolDescriptor[];
  /** Tools a source listed but that cannot be offered, with the reason. */
  readonly unavailable: readonly UnavailableTool[];
  /** Sources that could not be listed at all; their tools are missing. */
  readonly sourceErrors: readonly { readonly sourceId: string; readonly error: Error & { readonly code?: string } }[];
}

interface RegisteredTool {
  readonly descriptor: ToolDescriptor;
  readonly source: ToolSource;
  readonly input: CompiledSchema | undefined;
  readonly output: CompiledSchema | undefined;
  readonly strictOutput: boolean;
  readonly timeoutMs: number | undefined;
  instance: ToolInstance | undefined;
  instancePromise: Promise<ToolInstance> | undefined;
}

interface Catalog {
  readonly tools: Map<string, RegisteredTool>;
  readonly unavailable: Map<string, UnavailableTool>;
  readonly result: DiscoveryResult;
}

/**
 * Runs tools from every registered source through one lifecycle —
 * discover → activate → execute → deactivate — inside plans.
 *
 * `execute` **throws** when the call cannot or must not run the tool
 * (cancelled, unknown tool, plan ended, activation failed, access denied,
 * checkpoint required) and when the tool throws (`ToolExecutionError`);
 * it **returns a failed result** when the input does not match the schema,
 * when the tool itself reports a failure, and when a strict output does not
 * match. Either way exactly one trace is appended to the context (a thrown
 * error carries it as `.trace`).
 */
export class ToolRuntime {
  private readonly sources: readonly ToolSource[];
  private readonly validator: SchemaValidator;
  private readonly logger: RuntimeLogger;
  private readonly clock: RuntimeClock;
  private readonly cache: ToolLifecycleCache;
  private readonly autoActivate: boolean;
  private readonly defaultTimeoutMs: number | undefined;
  private readonly strictOutput: boolean;
  private catalog: Catalog | undefined;
  private discovering: Promise<Catalog> | undefined;
  private readonly unsubscribers: (() => void)[] = [];
  private readonly planTokens = new Map<string, CancellationToken[]>();
  // Wall-clock time is derived from the monotonic clock (one clock read per
  // timestamp instead of two), re-anchored every second so that it follows
  // adjustments of the system clock.
  private wallOffset = 0;
  private wallAnchoredAt = Number.NEGATIVE_INFINITY;
  // ISO-8601 formatting is costly; executions in the same millisecond share it.
  private isoMillisecond = Number.NaN;
  private isoString = '';

  constructor(settings: ToolRuntimeSettings = {}) {
    const options = settings.options ?? {};
    checkOptions(options);
    this.sources = [...(settings.sources ?? [])];
    this.validator = settings.validator ?? createSchemaValidator();
    this.logger = settings.logger ?? createConsoleLogger();
    this.clock = settings.clock ?? systemClock;
    this.cache =
      settings.cache ??
      new ToolLifecycleCache(this.logger, cacheOptionsOf(options));
    this.autoActivate = options.autoActivate ?? true;
    this.defaultTimeoutMs = options.defaultTimeoutMs;
    this.strictOutput = options.strictOutput ?? false;
    for (const source of this.sources) {
      if (typeof source?.discover !== 'function' || typeof source.get !== 'function') {
        throw new ToolInvalidArgumentError({
          message: `A tool source must have discover() and get() methods; got ${describeValue(source)}. Register a ToolSource (e.g. from an @ca/adapters-* package).`,
        });
      }
    }
  }

  /**
   * Lists the tools of every source. Compiles each tool's schemas (a schema
   * that does not compile makes the tool unavailable, with the reason) and
   * refuses duplicate names. The result is kept until a source reports a
   * change or `refresh` is asked for.
   * @throws ToolRegistrationError when two sources offer the same tool name.
   */
  async discover(options: { readonly signal?: AbortSignal; readonly refresh?: boolean } = {}): Promise<DiscoveryResult> {
    if (options.refresh === true) this.catalog = undefined;
    return (await this.loadCatalog(options.signal)).result;
  }

  /** The usable tools (discovering first if needed), sorted by name. */
  async listTools(): Promise<readonly ToolDescriptor[]> {
    return (await this.loadCatalog()).result.tools;
  }

  /**
   * The descriptor of one tool.
   * @throws ToolNotFoundError when no source offers it.
   */
  async describe(name: string): Promise<ToolDescriptor> {
    return (await this.lookup(name, undefined)).descriptor;
  }

  /**
   * Creates the context of a new plan. With `timeoutMs`, the plan is
   * cancelled when the deadline passes; the timer is released by `endPlan`.
   * @throws ContextValidationError (from @ca/tool-context) for invalid options.
   */
  createPlan(options: PlanOptions = {}): ToolExecutionContext {
    const { timeoutMs, signal, ...contextOptions } = options ?? {};
    if (timeoutMs !== undefined) checkTimeout(timeoutMs, 'timeoutMs');
    // Tokens made here follow a signal or hold a timer: endPlan disposes them.
    // A token the caller passed stays the caller's.
    const owned: CancellationToken[] = [];
    let token = contextOptions.cancellationToken;
    if (token === undefined && (signal !== undefined || timeoutMs !== undefined)) {
      token = new CancellationToken(signal === undefined ? {} : { signal });
      owned.push(token);
    }
    if (token !== undefined && timeoutMs !== undefined) {
      token = token.child({ timeoutMs, reason: `plan timed out after ${timeoutMs} ms` });
      owned.push(token);
    }
    let ctx: ToolExecutionContext;
    try {
      ctx = createExecutionContext(token === undefined ? contextOptions : { ...contextOptions, cancellationToken: token });
    } catch (error) {
      for (const created of owned) created.dispose();
      throw error;
    }
    if (owned.length > 0) this.planTokens.set(ctx.planId, owned);
    return ctx;
  }

  /**
   * Activates a tool in the plan of `ctx` now (at most once per plan; a
   * concurrent call shares the activation in flight).
   * @throws ToolNotFoundError, ToolPlanEndedError, ToolActivationError.
   */
  async activate(name: string, ctx: ToolExecutionContext): Promise<void> {
    checkContext(ctx, name);
    const entry = await this.lookup(name, ctx.planId);
    const instance = entry.instance ?? (await this.instanceOf(entry, ctx.planId));
    await this.cache.ensureActive(name, instance, ctx);
  }

  /** True when the tool is active in the plan. */
  isActive(name: string, ctx: ToolExecutionContext): boolean {
    return this.cache.isActive(ctx.planId, name);
  }

  /**
   * Runs one tool in a plan, through the seven steps of the lifecycle:
   * cancellation check, activation, capability enforcement, input
   * validation, the call (timed, cancellable), output validation, and the
   * recording of its changes. Appends exactly one trace to `ctx`.
   * @throws ToolCancelledError, ToolNotFoundError, ToolPlanEndedError,
   * ToolNotActivatedError, ToolActivationError, ToolAccessDeniedError,
   * ToolCheckpointRequiredError, ToolExecutionError — each with `.trace`.
   */
  async execute<O = unknown>(
    name: string,
    input: unknown,
    ctx: ToolExecutionContext,
    options?: ExecuteOptions,
  ): Promise<ExecutionResult<O>> {
    checkContext(ctx, name);
    const planId = ctx.planId;
    const executionId = createExecutionId();
    const startedMono = this.clock.monotonic();
    const startedAt = this.wallClock(startedMono);
    const tracer = activeTracer();
    let span: Span | undefined;
    let entry: RegisteredTool | undefined;
    try {
      // 1. A cancelled plan runs nothing.
      ctx.cancellationToken.check({ toolName: name, planId });
      entry = this.catalog?.tools.get(name) ?? (await this.lookup(name, planId));
      if (tracer !== undefined) span = startToolSpan(tracer, name, executionId, entry.descriptor.source, planId);
      const instance = entry.instance ?? (await this.instanceOf(entry, planId));
      // 2. Activate once per (plan, tool).
      const activation = this.autoActivate ? this.cache.ensureActive(name, instance, ctx) : this.requireActive(name, ctx);
      if (activation !== undefined) await untilCancelled(activation, ctx.cancellationToken, name, planId);
      // 3. Capability enforcement: nothing of the tool runs when refused.
      const capability = entry.descriptor.capability;
      if (ctx.policy.readOnly && capability.writes) {
        throw new ToolAccessDeniedError({
          toolName: name,
          planId,
          message: `Tool '${name}' writes, but plan '${planId}' is read-only. Run it in a plan whose policy has readOnly: false, or choose a tool that does not write.`,
        });
      }
      if (ctx.policy.requireCheckpoint && !capability.checkpointable) {
        throw new ToolCheckpointRequiredError({
          toolName: name,
          planId,
          message: `Tool '${name}' is not checkpointable, but plan '${planId}' requires checkpoints. Run it in a plan whose policy has requireCheckpoint: false, or choose a tool that records undoable changes.`,
        });
      }
      // 4. Invalid input: a failed result, the tool is not called.
      if (entry.input !== undefined) {
        const check = entry.input.validate(input);
        if (!check.valid) {
          const error = new ToolSchemaValidationError({ direction: 'input', issues: check.issues, toolName: name, planId });
          return this.complete(ctx, entry, executionId, startedAt, startedMono, span, { ok: false, error }, 0);
        }
      }
      // 5. The call.
      const result = await this.call(entry, instance, input, ctx, executionId, options);
      return this.finishCall(ctx, entry, executionId, startedAt, startedMono, span, result);
    } catch (thrown) {
      const error = this.toThrownError(thrown, name, planId);
      const trace = this.recordTrace(ctx, name, executionId, startedAt, startedMono, 0, error);
      if (span !== undefined) endToolSpan(span, errorType(error), error.message);
      Object.defineProperty(error, 'trace', { value: trace, configurable: true, writable: true, enumerable: false });
      throw error;
    }
  }

  /**
   * Ends a plan: waits for its in-flight executions (at most the grace
   * period), then deactivates every tool activated in it, each exactly
   * once. Idempotent; never throws — failures are logged and reported.
   */
  async endPlan(ctx: ToolExecutionContext, options: { readonly graceMs?: number } = {}): Promise<PlanEndReport> {
    const planId = typeof ctx?.planId === 'string' ? ctx.planId : undefined;
    if (planId === undefined) {
      this.logger.error('endPlan was called without a plan context; nothing was ended.', {});
      return { planId: '', deactivated: [], failures: [], abandonedExecutions: 0, alreadyEnded: false };
    }
    try {
      return await this.cache.release(planId, options);
    } finally {
      const tokens = this.planTokens.get(planId);
      if (tokens !== undefined) {
        this.planTokens.delete(planId);
        for (const token of tokens) token.dispose();
      }
    }
  }

  /**
   * Creates a plan, runs `fn` in it and always ends the plan, also when `fn`
   * throws — in which case the plan is cancelled first, so executions `fn`
   * left running stop. Resolves to what `fn` resolves to; the end report is
   * passed to `onEnd` when given.
   */
  async runPlan<T>(
    options: PlanOptions & { readonly onEnd?: (report: PlanEndReport) => void },
    fn: (ctx: ToolExecutionContext, runtime: ToolRuntime) => Promise<T> | T,
  ): Promise<T> {
    if (typeof fn !== 'function') {
      throw new ToolInvalidArgumentError({ message: 'runPlan(options, fn) needs a function to run in the plan.' });
    }
    const { onEnd, ...planOptions } = options ?? {};
    const ctx = this.createPlan(planOptions);
    let failed = false;
    try {
      return await fn(ctx, this);
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      if (failed) ctx.cancellationToken.cancel(`plan '${ctx.planId}' failed`);
      const report = await this.endPlan(ctx);
      onEnd?.(report);
    }
  }

  /** Unsubscribes from sources and disposes them (shared sessions, watchers). */
  async dispose(): Promise<void> {
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
    for (const tokens of this.planTokens.values()) for (const token of tokens) token.dispose();
    this.planTokens.clear();
    await Promise.all(
      this.sources.map(async (source) => {
        try {
          await source.dispose?.();
        } catch (error) {
          this.logger.error(`Tool source '${source.id}' failed to dispose: ${messageOf(error)}`, { sourceId: source.id });
        }
      }),
    );
  }

  // ---------------------------------------------------------------------------

  private wallClock(monotonic: number): number {
    if (monotonic - this.wallAnchoredAt > 1_000) {
      this.wallAnchoredAt = monotonic;
      this.wallOffset = this.clock.now() - monotonic;
    }
    return monotonic + this.wallOffset;
  }

  private isoTime(epochMs: number): string {
    const millisecond = Math.floor(epochMs);
    if (millisecond !== this.isoMillisecond) {
      this.isoMillisecond = millisecond;
      this.isoString = new Date(millisecond).toISOString();
    }
    return this.isoString;
  }

  private requireActive(name: string, ctx: ToolExecutionContext): undefined {
    if (!this.cache.isActive(ctx.planId, name)) {
      throw new ToolNotActivatedError({
        toolName: name,
        planId: ctx.planId,
        message: `Tool '${name}' is not active in plan '${ctx.planId}' and this runtime does not auto-activate. Call runtime.activate('${name}', ctx) first, or create the runtime with autoActivate: true.`,
      });
    }
    return undefined;
  }

  private call(
    entry: RegisteredTool,
    instance: ToolInstance,
    input: unknown,
    ctx: ToolExecutionContext,
    executionId: string,
    options: ExecuteOptions | undefined,
  ): Promise<ToolResult> {
    const name = entry.descriptor.name;
    const planId = ctx.planId;
    const timeoutMs = options?.timeoutMs ?? entry.timeoutMs;
    const planToken = ctx.cancellationToken;
    // Cancelled while activating or validating: the tool must not start.
    planToken.check({ toolName: name, planId });
    const token =
      timeoutMs === undefined
        ? planToken
        : planToken.child({ timeoutMs, reason: `tool '${name}' timed out after ${timeoutMs} ms` });
    this.cache.beginExecution(ctx, name);
    const execution = ctx.forExecution({ executionId, toolName: name, cancellationToken: token });
    const callOptions: ToolCallOptions | undefined =
      options?.onProgress === undefined ? undefined : { onProgress: options.onProgress };
    let running: Promise<ToolResult>;
    try {
      running = Promise.resolve(instance.execute(input, execution, callOptions));
    } catch (error) {
      running = Promise.reject(error);
    }
    // The plan counts the tool as in flight until its own promise settles,
    // even when the caller has already been answered (cancellation).
    return new Promise<ToolResult>((resolve, reject) => {
      let answered = false;
      const unsubscribe = token.onCancel((reason) => {
        answered = true;
        reject(new ToolCancelledError({ reason, toolName: name, planId }));
      });
      running.then(
        (result) => {
          unsubscribe();
          this.cache.endExecution(planId);
          if (token !== planToken) token.dispose();
          // The caller already got ToolCancelledError, but what the tool did
          // before it stopped still happened: keep its changes for rollback.
          if (answered) this.recordLateChanges(ctx, name, executionId, result);
          resolve(result);
        },
        (error: unknown) => {
          unsubscribe();
          this.cache.endExecution(planId);
          const cancelled = token.isCancelled;
          if (token !== planToken) token.dispose();
          reject(
            cancelled && !ToolCancelledError.isInstance(error)
              ? new ToolCancelledError({ reason: token.reason ?? 'cancelled', toolName: name, planId, cause: error })
              : error,
          );
        },
      );
    });
  }

  private finishCall(
    ctx: ToolExecutionContext,
    entry: RegisteredTool,
    executionId: string,
    startedAt: number,
    startedMono: number,
    span: Span | undefined,
    raw: unknown,
  ): ExecutionResult<never> {
    const name = entry.descriptor.name;
    const planId = ctx.planId;
    let result = checkResult(raw, name, planId);
    // 7 (recorded first so that a failed output check still keeps them).
    const changes = result.changes;
    if (changes !== undefined && changes.length > 0) this.recordChanges(ctx, name, executionId, changes);
    let size = 0;
    if (result.ok) {
      let json: string | undefined;
      try {
        json = JSON.stringify(result.output);
      } catch (error) {
        result = {
          ok: false,
          error: new ToolExecutionError({
            toolName: name,
            planId,
            cause: error,
            message: `Tool '${name}' in plan '${planId}' returned an output that cannot be serialised to JSON (${messageOf(error)}). Return plain JSON data: no cycles, BigInt or functions.`,
          }),
        };
      }
      if (json !== undefined) size = utf8Length(json);
      // 6. Output validation.
      if (result.ok && entry.output !== undefined) {
        const check = entry.output.validate(result.output);
        if (!check.valid) {
          const error = new ToolSchemaValidationError({ direction: 'output', issues: check.issues, toolName: name, planId });
          if (entry.strictOutput) {
            result = { ...result, ok: false, error } as ToolFailure;
          } else {
            this.logger.warn(error.message, { code: error.code, toolName: name, planId, executionId, issues: check.issues });
          }
        }
      }
    }
    return this.complete(ctx, entry, executionId, startedAt, startedMono, span, result, size);
  }

  private complete(
    ctx: ToolExecutionContext,
    entry: RegisteredTool,
    executionId: string,
    startedAt: number,
    startedMono: number,
    span: Span | undefined,
    result: ToolResult,
    size: number,
  ): ExecutionResult<never> {
    const name = entry.descriptor.name;
    const error = result.ok ? undefined : result.error;
    const trace = this.recordTrace(ctx, name, executionId, startedAt, startedMono, size, error);
    if (span !== undefined) endToolSpan(span, error === undefined ? undefined : errorType(error), error?.message);
    return withExecution(result, executionId, name, trace);
  }

  private recordTrace(
    ctx: ToolExecutionContext,
    toolName: string,
    executionId: string,
    startedAt: number,
    startedMono: number,
    resultSizeBytes: number,
    error: unknown,
  ): ToolExecutionTrace {
    const durationMs = this.clock.monotonic() - startedMono;
    const traceError = error === undefined ? undefined : toTraceError(error);
    // Built without object spread: V8 takes a slow path for spreads here.
    const trace: { -readonly [K in keyof ToolExecutionTrace]: ToolExecutionTrace[K] } = {
      executionId,
      planId: ctx.planId,
      toolName,
      startedAt: this.isoTime(startedAt),
      endedAt: this.isoTime(startedAt + durationMs),
      durationMs,
      resultSizeBytes,
      success: error === undefined,
    };
    if (traceError !== undefined) trace.error = traceError;
    // Frozen, the context records this very object instead of a copy.
    Object.freeze(trace);
    try {
      ctx.recordTrace(trace);
    } catch (recordError) {
      this.logger.error(`Could not record the trace of tool '${toolName}' in plan '${ctx.planId}': ${messageOf(recordError)}`, {
        toolName,
        planId: ctx.planId,
      });
    }
    return trace;
  }

  private recordLateChanges(ctx: ToolExecutionContext, toolName: string, executionId: string, result: unknown): void {
    const changes = (result as { changes?: unknown } | null)?.changes;
    if (Array.isArray(changes) && changes.length > 0) this.recordChanges(ctx, toolName, executionId, changes);
  }

  private recordChanges(ctx: ToolExecutionContext, toolName: string, executionId: string, changes: readonly unknown[]): void {
    const at = this.isoTime(this.wallClock(this.clock.monotonic()));
    for (const change of changes) {
      try {
        const reported = change as Record<string, unknown>;
        ctx.recordChange({ ...(reported as object), toolName, executionId, at: typeof reported.at === 'string' ? reported.at : at } as never);
      } catch (error) {
        this.logger.warn(`Tool '${toolName}' in plan '${ctx.planId}' reported an invalid change; it was not recorded: ${messageOf(error)}`, {
          toolName,
          planId: ctx.planId,
          executionId,
        });
      }
    }
  }

  private toThrownError(thrown: unknown, toolName: string, planId: string): Error & { code?: string } {
    if (ToolRuntimeError.isInstance(thrown) || ToolCancelledError.isInstance(thrown)) return thrown;
    return new ToolExecutionError({
      toolName,
      planId,
      cause: thrown,
      message: `Tool '${toolName}' failed in plan '${planId}': ${messageOf(thrown)}. See the cause for details.`,
    });
  }

  private async lookup(name: string, planId: string | undefined): Promise<RegisteredTool> {
    if (typeof name !== 'string' || name.length === 0) {
      throw new ToolInvalidArgumentError({
        ...(planId === undefined ? {} : { planId }),
        message: `A tool name must be a non-empty string; got ${describeValue(name)}.`,
      });
    }
    const catalog = await this.loadCatalog();
    const entry = catalog.tools.get(name);
    if (entry !== undefined) return entry;
    const unavailable = catalog.unavailable.get(name);
    if (unavailable !== undefined) {
      throw new ToolRegistrationError({
        toolName: name,
        ...(planId === undefined ? {} : { planId }),
        cause: unavailable.error,
        message: `Tool '${name}' is unavailable: ${unavailable.reason}`,
      });
    }
    const near = [...catalog.tools.keys()].filter((candidate) => candidate.endsWith(`.${name}`) || candidate.includes(name)).slice(0, 3);
    throw new ToolNotFoundError({
      toolName: name,
      ...(planId === undefined ? {} : { planId }),
      message: `No source offers a tool named '${name}'${planId === undefined ? '' : ` (plan '${planId}')`}.${
        near.length > 0 ? ` Did you mean ${near.map((candidate) => `'${candidate}'`).join(', ')}?` : ''
      } List the available tools with runtime.listTools().`,
    });
  }

  private async instanceOf(entry: RegisteredTool, planId: string | undefined): Promise<ToolInstance> {
    entry.instancePromise ??= (async () => {
      const name = entry.descriptor.name;
      let instance: ToolInstance;
      try {
        instance = await entry.source.get(name);
      } catch (error) {
        entry.instancePromise = undefined;
        throw new ToolRegistrationError({
          toolName: name,
          ...(planId === undefined ? {} : { planId }),
          cause: error,
          message: `Source '${entry.source.id}' listed tool '${name}' but could not provide it: ${messageOf(error)}.`,
        });
      }
      if (typeof instance?.execute !== 'function') {
        entry.instancePromise = undefined;
        throw new ToolRegistrationError({
          toolName: name,
          message: `Source '${entry.source.id}' returned something without an execute() method for tool '${name}'. A ToolInstance must implement execute(input, ctx).`,
        });
      }
      entry.instance = instance;
      return instance;
    })();
    return entry.instancePromise;
  }

  private loadCatalog(signal?: AbortSignal): Promise<Catalog> {
    if (this.catalog !== undefined) return Promise.resolve(this.catalog);
    this.discovering ??= this.buildCatalog(signal).then(
      (catalog) => {
        this.catalog = catalog;
        this.discovering = undefined;
        return catalog;
      },
      (error: unknown) => {
        this.discovering = undefined;
        throw error;
      },
    );
    return this.discovering;
  }

  private async buildCatalog(signal?: AbortSignal): Promise<Catalog> {
    if (this.unsubscribers.length === 0) {
      for (const source of this.sources) {
        const unsubscribe = source.onToolsChanged?.(() => {
          this.catalog = undefined;
        });
        if (unsubscribe !== undefined) this.unsubscribers.push(unsubscribe);
      }
    }
    const listed = await Promise.all(
      this.sources.map(async (source) => {
        try {
          return { source, descriptors: await source.discover(signal), error: undefined };
        } catch (error) {
          return { source, descriptors: [] as readonly ToolDescriptor[], error: toError(error) };
        }
      }),
    );
    const tools = new Map<string, RegisteredTool>();
    const unavailable = new Map<string, UnavailableTool>();
    const sourceErrors: { sourceId: string; error: Error & { code?: string } }[] = [];
    const owners = new Map<string, string>();
    const duplicates: string[] = [];
    for (const { source, descriptors, error } of listed) {
      if (error !== undefined) {
        this.logger.error(`Tool source '${source.id}' could not be listed: ${error.message}`, { sourceId: source.id });
        sourceErrors.push({ sourceId: source.id, error });
        continue;
      }
      for (const item of source.unavailable?.() ?? []) unavailable.set(item.name, item);
      for (const raw of Array.isArray(descriptors) ? descriptors : []) {
        const name = (raw as { name?: unknown })?.name;
        const owner = typeof name === 'string' ? owners.get(name) : undefined;
        if (typeof name === 'string' && owner !== undefined) {
          duplicates.push(`'${name}' (from '${owner}' and '${source.id}')`);
          continue;
        }
        if (typeof name === 'string') owners.set(name, source.id);
        const registered = this.register(source, raw);
        if ('reason' in registered) unavailable.set(registered.name, registered);
        else tools.set(registered.descriptor.name, registered);
      }
    }
    if (duplicates.length > 0) {
      throw new ToolRegistrationError({
        message: `Two sources offer a tool of the same name: ${duplicates.join(', ')}. Tool names must be unique across a runtime; rename or namespace one of them (e.g. with wrapTool from @ca/adapters-wrapped), or remove one source.`,
      });
    }
    const result: DiscoveryResult = {
      tools: [...tools.values()].map((entry) => entry.descriptor).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
      unavailable: [...unavailable.values()],
      sourceErrors,
    };
    return { tools, unavailable, result };
  }

  private register(source: ToolSource, raw: unknown): RegisteredTool | UnavailableTool {
    const candidate = (typeof raw === 'object' && raw !== null ? raw : {}) as Partial<ToolDescriptor>;
    const name = typeof candidate.name === 'string' ? candidate.name : `<unnamed tool of ${source.id}>`;
    const unavailable = (reason: string, error?: Error): UnavailableTool => {
      this.logger.warn(`Tool '${name}' of source '${source.id}' is unavailable: ${reason}`, { toolName: name, sourceId: source.id });
      return { name, source: source.kind, reason, ...(error === undefined ? {} : { error }) };
    };
    if (!isValidToolName(candidate.name)) {
      return unavailable(
        `its name ${describeValue(candidate.name)} is not valid: use 1–200 letters, digits, '_', '.', ':' or '-', starting with a letter, digit or '_'.`,
      );
    }
    if (!isToolSourceKind(candidate.source)) {
      return unavailable(`its source kind ${describeValue(candidate.source)} is not one of builtin, custom, mcp, skill, wrapped.`);
    }
    if (candidate.timeoutMs !== undefined && !isTimeout(candidate.timeoutMs)) {
      return unavailable(`its timeoutMs ${describeValue(candidate.timeoutMs)} is not a positive number of milliseconds.`);
    }
    let input: CompiledSchema | undefined;
    let output: CompiledSchema | undefined;
    try {
      if (candidate.inputSchema !== undefined) input = this.validator.compile(candidate.inputSchema, { toolName: name, direction: 'input' });
      if (candidate.outputSchema !== undefined) {
        output = this.validator.compile(candidate.outputSchema, { toolName: name, direction: 'output' });
      }
    } catch (error) {
      const reason = SchemaCompileError.isInstance(error) ? error.message : `its schema cannot be compiled: ${messageOf(error)}`;
      return unavailable(reason, toError(error));
    }
    const descriptor: ToolDescriptor = Object.freeze({
      ...candidate,
      name: candidate.name,
      description: typeof candidate.description === 'string' ? candidate.description : '',
      source: candidate.source,
      capability: normalizeCapability(candidate.capability),
    }) as ToolDescriptor;
    return {
      descriptor,
      source,
      input,
      output,
      strictOutput: this.strictOutput || candidate.strictOutput === true,
      timeoutMs: candidate.timeoutMs ?? this.defaultTimeoutMs,
      instance: undefined,
      instancePromise: undefined,
    };
  }
}

/**
 * The result handed to the caller: the tool's result plus the execution's
 * identity and trace. Built field by field — `{ ...result, extra }` is
 * several microseconds in V8 on this path, more than the rest of execute.
 */
function withExecution(result: ToolResult, executionId: string, toolName: string, trace: ToolExecutionTrace): ExecutionResult<never> {
  const out: Record<string, unknown> = result.ok
    ? { ok: true, output: result.output, executionId, toolName, trace }
    : { ok: false, error: result.error, executionId, toolName, trace };
  if (!result.ok && result.output !== undefined) out.output = result.output;
  if (result.content !== undefined) out.content = result.content;
  if (result.changes !== undefined) out.changes = result.changes;
  if (result.metadata !== undefined) out.metadata = result.metadata;
  return out as unknown as ExecutionResult<never>;
}

/**
 * Waits for `work` unless the token is cancelled first: an activation that
 * ignores cancellation must not keep its caller waiting. The work goes on in
 * the background; the lifecycle cache still tracks and matches it.
 */
function untilCancelled(work: Promise<void>, token: CancellationToken, toolName: string, planId: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (token.isCancelled) {
      work.catch(() => undefined); // its outcome is the cache's business now
      reject(new ToolCancelledError({ reason: token.reason ?? 'cancelled', toolName, planId }));
      return;
    }
    const unsubscribe = token.onCancel((reason) => reject(new ToolCancelledError({ reason, toolName, planId })));
    work.then(
      () => {
        unsubscribe();
        resolve();
      },
      (error: unknown) => {
        unsubscribe();
        reject(error);
      },
    );
  });
}

/** UTF-8 byte length; short ASCII strings (the common output) skip Buffer. */
function utf8Length(text: string): number {
  if (text.length > 256) return Buffer.byteLength(text, 'utf8');
  for (let index = 0; index < text.length; index++) {
    if (text.charCodeAt(index) > 0x7f) return Buffer.byteLength(text, 'utf8');
  }
  return text.length;
}

function checkResult(raw: unknown, toolName: string, planId: string): ToolResult {
  if (typeof raw === 'object' && raw !== null) {
    const result = raw as ToolResult;
    if (result.ok === true) return result;
    if (result.ok === false) {
      if (result.error instanceof Error) return result;
      return {
        ...result,
        error: new ToolExecutionError({
          toolName,
          planId,
          cause: result.error,
          message: `Tool '${toolName}' failed in plan '${planId}': ${messageOf(result.error ?? 'no error given')}.`,
        }),
      };
    }
  }
  return {
    ok: false,
    error: new ToolExecutionError({
      toolName,
      planId,
      message: `Tool '${toolName}' in plan '${planId}' returned ${describeValue(raw)} instead of a ToolResult ({ ok: true, output } or { ok: false, error }). Fix the tool's execute().`,
    }),
  };
}

function checkContext(ctx: ToolExecutionContext, toolName: unknown): void {
  if (
    typeof ctx !== 'object' ||
    ctx === null ||
    typeof ctx.planId !== 'string' ||
    typeof ctx.cancellationToken?.check !== 'function' ||
    typeof ctx.forExecution !== 'function'
  ) {
    throw new ToolInvalidArgumentError({
      ...(typeof toolName === 'string' ? { toolName } : {}),
      message: `Tool ${describeValue(toolName)} was called without a plan context (got ${describeValue(ctx)}). Create one with runtime.createPlan() or run inside runtime.runPlan().`,
    });
  }
}

/** @internal the lifecycle cache settings that the runtime options carry. */
export function cacheOptionsOf(options: ToolRuntimeOptions): ToolLifecycleCacheOptions {
  return {
    ...(options.endPlanGraceMs === undefined ? {} : { graceMs: options.endPlanGraceMs }),
    ...(options.deactivateTimeoutMs === undefined ? {} : { deactivateTimeoutMs: options.deactivateTimeoutMs }),
  };
}

function checkOptions(options: ToolRuntimeOptions): void {
  if (options.defaultTimeoutMs !== undefined) checkTimeout(options.defaultTimeoutMs, 'defaultTimeoutMs');
  if (options.endPlanGraceMs !== undefined && !(Number.isFinite(options.endPlanGraceMs) && options.endPlanGraceMs >= 0)) {
    throw new ToolInvalidArgumentError({ message: `endPlanGraceMs must be a number of milliseconds ≥ 0; got ${describeValue(options.endPlanGraceMs)}.` });
  }
  if (options.deactivateTimeoutMs !== undefined) checkTimeout(options.deactivateTimeoutMs, 'deactivateTimeoutMs');
}

function isTimeout(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= 2_147_483_647;
}

function checkTimeout(value: unknown, field: string): void {
  if (!isTimeout(value)) {
    throw new ToolInvalidArgumentError({
      message: `${field} must be a positive number of milliseconds (at most 2147483647); got ${describeValue(value)}.`,
    });
  }
}

function errorType(error: Error & { code?: unknown }): string {
  return typeof error.code === 'string' ? error.code : error.name;
}

function toError(value: unknown): Error & { code?: string } {
  return value instanceof Error ? value : new Error(messageOf(value));
}


/** @internal a short description of any value for error messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return `'${value.length > 60 ? `${value.slice(0, 60)}…` : value}'`;
  if (typeof value === 'object') return Array.isArray(value) ? 'an array' : 'an object';
  return `${typeof value} ${String(value)}`;
}

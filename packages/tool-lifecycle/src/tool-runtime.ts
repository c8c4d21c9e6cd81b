import { ToolSchemaValidationError, createSchemaValidator } from '@ca/schema';
import { toTraceRepairs, type PlanContext, type ToolExecutionContext } from '@ca/tool-context';
import { ApprovalGate, compileToolRules } from './approval';
import { ToolCatalog, type DiscoveryResult, type RegisteredTool } from './catalog';
import { CallRunner, CallSettings, JournaledCalls, PlanCallRecords, ResumeRules, executionsByView, untilCancelled, type ExecuteOptions } from './calls';
import { ToolInvalidArgumentError } from './errors';
import { HookPending, ToolHooks } from './hooks';
import { createDefinitionLock, quarantineCheck, type DefinitionLock } from './pins';
import { ToolLifecycleCache, checkPlanContext, createPlanContext, enforcePolicy, type PlanEndReport, type PlanOptions } from './plan';
import { PlanRegistryLink, checkRegistryOption, type PlanRegistry } from './plan-registry';
import { DEFAULT_DISCOVER_TIMEOUT_MS, cacheOptionsOf, checkSettings, checkTimeout, type ToolRuntimeSettings } from './runtime-options';
import { ExecutionRecorder, TraceClock, extraOf, createConsoleLogger, createRedactingLogger, systemClock, type RuntimeLogger } from './observability';
import { CatalogSearch, type ToolSearchHit, type ToolSearchOptions } from './search';
import { createResultHandles, createRuntimeToolSet, type ResultHandles } from './results';
import { checkJournal } from './journal';
import type { ExecutionResult, ToolDescriptor, ToolResult } from './tool';

export type { DiscoveryResult } from './catalog';

/**
 * The execution a tool's view was given to, for a tool that makes calls of
 * its own in the plan (`@ca/code-mode`'s `code.run`): see `ToolRuntime.callerOf`.
 */
export interface ToolCaller {
  /** The plan the execution runs in: what inner calls are made in. */
  readonly ctx: PlanContext;
  /** The execution's id: the inner calls' `parentExecutionId`. */
  readonly executionId: string;
  readonly toolName: string;
  /** The caller's step id of the execution, when it was made with one (`execute(…, { step })`). */
  readonly step?: string;
}

/**
 * The step id of the `ordinal`-th inner call of `caller` (1, 2, …):
 * `<caller's step>/<ordinal>`, or `<caller's execution id>/<ordinal>` for a
 * caller made without a step. The same in every process that makes the caller's
 * step again in the same order, so the plan's call journal answers an inner
 * call already made instead of making it twice.
 * @throws ToolInvalidArgumentError for an ordinal that is not a whole number ≥ 1.
 */
export function innerCallStep(caller: ToolCaller, ordinal: number): string {
  if (!Number.isSafeInteger(ordinal) || ordinal < 1) {
    throw new ToolInvalidArgumentError({ argument: 'ordinal', expected: 'a whole number ≥ 1', received: ordinal, toolName: caller?.toolName });
  }
  return `${caller.step ?? caller.executionId}/${ordinal}`;
}
export type { ExecuteOptions } from './calls';
export type { PlanOptions } from './plan';
export type { ToolRuntimeOptions, ToolRuntimeSettings } from './runtime-options';

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
 *
 * Each step is a call into the folder of its concern: `catalog/` (the tools),
 * `plan/` (activations, the plan's records, the policy), `approval/`,
 * `hooks/` (the service's checks before and after the call),
 * `calls/` (the call, retries, limits, steps, the outcome), `observability/`
 * (traces and spans), `plan-registry/`.
 */
export class ToolRuntime {
  private readonly catalog: ToolCatalog;
  private readonly logger: RuntimeLogger;
  private readonly cache: ToolLifecycleCache;
  private readonly autoActivate: boolean;
  private readonly recorder: ExecutionRecorder;
  private readonly approvals: ApprovalGate;
  /** What the runtime keeps per plan beyond its context (approvals, idempotency, limits); dropped with the context. */
  private readonly plans = new PlanCallRecords();
  private readonly calls: CallRunner;
  private readonly registryLink: PlanRegistryLink | undefined;
  /** The service's hooks; undefined when it has none, so that no call pays for the step. */
  private readonly hooks: ToolHooks | undefined;
  private readonly toolSearch: CatalogSearch;
  /** Outputs over the budget, behind handles (with `options.outputBudget`). */
  private readonly results: ResultHandles | undefined;
  /** Calls with a step id, through the plan's journal. */
  private readonly journaled: JournaledCalls;
  /** True once the runtime or a plan has a journal of its own: only then is a call without a step id checked against it. */
  private journaling: boolean;

  constructor(settings: ToolRuntimeSettings = {}) {
    const options = settings.options ?? {};
    checkSettings(settings, options);
    this.logger = createRedactingLogger(settings.logger ?? createConsoleLogger());
    const runtimeClock = settings.clock ?? systemClock;
    const clock = new TraceClock(runtimeClock);
    this.cache = settings.cache ?? new ToolLifecycleCache(this.logger, cacheOptionsOf(options));
    this.autoActivate = options.autoActivate ?? true;
    this.recorder = new ExecutionRecorder(clock, this.logger);
    // Answers through the registry need its list of waiting requests kept current: one refresh per change.
    const registryApprovals = options.registryApprovals === true && settings.planRegistry !== undefined;
    this.approvals = new ApprovalGate({
      rules: options.rules === undefined ? undefined : compileToolRules(options.rules),
      handler: settings.approvalHandler,
      store: settings.approvalStore,
      key: settings.approvalKey,
      timeoutMs: options.approvalTimeoutMs,
      logger: this.logger,
      monotonic: () => runtimeClock.monotonic(),
      now: () => runtimeClock.now(),
      ...(registryApprovals ? { onPendingChange: (ctx: PlanContext) => this.registryLink?.refresh(ctx.planId) } : {}),
    });
    this.hooks = ToolHooks.create(settings.hooks, () => runtimeClock.monotonic());
    const callSettings = options.calls === undefined ? undefined : new CallSettings(options.calls);
    this.calls = new CallRunner(this.cache, this.logger, clock, this.plans, this.recorder, callSettings?.empty === false ? callSettings : undefined);
    this.registryLink = settings.planRegistry === undefined ? undefined : this.linkToRegistry(settings.planRegistry, registryApprovals);
    this.results = createResultHandles(options.outputBudget, settings.resultStore, this.logger);
    // The runtime's own tools (tools.search, results.*) are one more source of the catalog.
    const own = createRuntimeToolSet(this.results, options.searchTool === true ? (query, search) => this.toolSearch.search(query, search) : undefined);
    this.catalog = new ToolCatalog({
      sources: own === undefined ? (settings.sources ?? []) : [...(settings.sources ?? []), own],
      validator: settings.validator ?? createSchemaValidator(),
      logger: this.logger,
      strictOutput: options.strictOutput ?? false,
      defaultTimeoutMs: options.defaultTimeoutMs,
      discoverTimeoutMs: options.discoverTimeoutMs ?? DEFAULT_DISCOVER_TIMEOUT_MS,
      quarantine: settings.pins === undefined ? undefined : quarantineCheck(settings.pins),
    });
    this.toolSearch = new CatalogSearch(this.catalog, settings.searchReranker);
    const hooks = this.hooks;
    this.journaling = settings.journal !== undefined;
    this.journaled = new JournaledCalls({
      plans: this.plans,
      recorder: this.recorder,
      approvals: this.approvals,
      calls: this.calls,
      after:
        hooks === undefined
          ? undefined
          : (execution, tool, input, result) => {
              const hooked = hooks.after(execution, tool, input, result);
              return (hooked instanceof HookPending ? hooked.promise : hooked) as ToolResult | Promise<ToolResult>;
            },
      limit: this.results === undefined ? undefined : (result, ctx) => (this.results as ResultHandles).limit(result, ctx),
      journal: settings.journal === undefined ? undefined : checkJournal(settings.journal, 'journal'),
      resume: new ResumeRules(options.resume),
    });
  }

  /**
   * Lists the tools of every source. Compiles each tool's schemas (a schema
   * that does not compile makes the tool unavailable, with the reason) and
   * refuses duplicate names. A source that fails or misses the discovery
   * deadline is reported in `sourceErrors`. The result is kept until a source
   * reports a change or `refresh` is asked for.
   * @throws ToolRegistrationError when two sources offer the same tool name.
   */
  discover(options: { readonly signal?: AbortSignal; readonly refresh?: boolean } = {}): Promise<DiscoveryResult> {
    return this.catalog.discover(options);
  }

  /**
   * A lock of every tool's definition as the sources offer it now, quarantined
   * tools included (what `agents tools lock` writes): give it to your
   * `DefinitionPins` to accept the changes, then `discover({ refresh: true })`.
   * A source that could not be listed keeps its pins from `previous`.
   */
  async lockDefinitions(options: { readonly previous?: DefinitionLock } = {}): Promise<DefinitionLock> {
    const { bySource, failedSources } = await this.catalog.definitions();
    return createDefinitionLock(bySource, options.previous, failedSources);
  }

  /** The usable tools (discovering first if needed), sorted by name. */
  async listTools(): Promise<readonly ToolDescriptor[]> {
    return (await this.catalog.discover()).tools;
  }

  /**
   * The tools of every source that best match `query` (words, ranked by
   * BM25F; or a pattern with `mode: 'regex'`), best first: name, one-line
   * description, source, score and, with `schemas: true`, the schemas. With
   * `ctx`, only tools the plan's policy lets run. Kept current with the
   * catalog (see the README, "Tool search").
   * @throws ToolInvalidArgumentError for an invalid query, pattern or option.
   * @throws ToolSearchError when the service's reranker fails.
   */
  searchTools(query: string, options?: ToolSearchOptions): Promise<ToolSearchHit[]> {
    return this.toolSearch.search(query, options);
  }

  /**
   * The descriptor of one tool.
   * @throws ToolNotFoundError when no source offers it.
   */
  async describe(name: string): Promise<ToolDescriptor> {
    return (await this.catalog.lookup(name, undefined)).descriptor;
  }

  /**
   * Creates the context of a new plan. With `timeoutMs`, the plan is
   * cancelled when the deadline passes; the timer is released by `endPlan`.
   * End every plan you create (or use `runPlan`), so that its tools are
   * deactivated and what the runtime holds for it is freed.
   * With a plan registry, the plan is registered in the background (see
   * `whenRegistered`) and withdrawn by `endPlan`.
   * @throws ContextValidationError (from @ca/tool-context) for invalid options.
   * @throws ToolPlanEndedError when `planId` names a plan that has ended.
   * @throws ToolInvalidArgumentError for an invalid `timeoutMs` or `registry`.
   */
  createPlan(options: PlanOptions = {}): PlanContext {
    const { timeoutMs, registry, journal, ...contextOptions } = options ?? {};
    if (timeoutMs !== undefined) checkTimeout(timeoutMs, 'timeoutMs');
    if (journal !== undefined) checkJournal(journal, 'journal');
    const registration = checkRegistryOption(registry, contextOptions.planId);
    const { ctx, owned } = createPlanContext(contextOptions, timeoutMs);
    try {
      this.cache.open(ctx, owned);
      if (journal !== undefined) {
        this.plans.planCalls(ctx).journal = journal;
        this.journaling = true;
      }
      if (this.registryLink !== undefined && registration !== false) this.registryLink.attach(ctx, registration);
    } catch (error) {
      for (const created of owned) created.dispose();
      throw error;
    }
    return ctx;
  }

  /**
   * Resolves once the plan of `ctx` is in the runtime's plan registry (at
   * once without a registry, or for a plan kept out of it). `runPlan` waits
   * for this before running its function.
   * @throws PlanRegistryError when the registry refused the plan (its id is
   *   taken by a running plan). A registry that cannot be reached is not an
   *   error: the plan is registered once it can be.
   */
  async whenRegistered(ctx: PlanContext): Promise<void> {
    if (this.registryLink !== undefined && typeof ctx?.planId === 'string') await this.registryLink.whenRegistered(ctx.planId);
  }

  /**
   * Activates a tool in the plan of `ctx` now (at most once per plan; a
   * concurrent call shares the activation in flight).
   * @throws ToolNotFoundError, ToolPlanEndedError, ToolActivationError.
   */
  async activate(name: string, ctx: PlanContext): Promise<void> {
    checkPlanContext(ctx, name);
    const tool = await this.catalog.lookup(name, ctx.planId);
    const instance = tool.instance ?? (await this.catalog.instanceOf(tool, ctx.planId));
    await this.cache.ensureActive(name, instance, ctx);
  }

  /** True when the tool is active in the plan. */
  isActive(name: string, ctx: PlanContext): boolean {
    return this.cache.isActive(ctx.planId, name);
  }

  /**
   * Runs one tool in a plan, through the seven steps of the lifecycle, and
   * appends exactly one trace to `ctx`.
   * @throws ToolCancelledError, ToolNotFoundError, ToolPlanEndedError,
   * ToolNotActivatedError, ToolActivationError, ToolAccessDeniedError,
   * ToolCheckpointRequiredError, ToolApprovalDeniedError, ToolLimitExceededError,
   * ToolExecutionError — each with `.trace`.
   */
  async execute<O = unknown>(name: string, input: unknown, ctx: PlanContext, options?: ExecuteOptions): Promise<ExecutionResult<O>> {
    checkPlanContext(ctx, name);
    const planId = ctx.planId;
    const execution = this.recorder.start(name, ctx);
    if (options?.repairs !== undefined) extraOf(execution).repairs = toTraceRepairs(options.repairs);
    if (options?.parentExecutionId !== undefined) extraOf(execution).parentExecutionId = checkParent(options.parentExecutionId, name, planId);
    let tool: RegisteredTool | undefined;
    try {
      // 1. A cancelled plan runs nothing.
      if (ctx.cancellationToken.isCancelled) ctx.cancellationToken.check({ toolName: name, planId });
      // 2. The tool, from the catalog, activated once per (plan, tool).
      tool = this.catalog.loaded(name) ?? (await this.catalog.lookup(name, planId));
      this.recorder.found(execution, tool);
      const instance = tool.instance ?? (await this.catalog.instanceOf(tool, planId));
      const activation = this.autoActivate ? this.cache.ensureActive(name, instance, ctx) : this.cache.requireActive(name, ctx);
      if (activation !== undefined) await untilCancelled(activation, ctx.cancellationToken, name, planId);
      // 3. The plan's policy against the tool's capability: nothing of the tool runs when refused.
      enforcePolicy(tool.descriptor, ctx);
      // 4. Invalid input: a failed result, the tool is not called.
      const check = tool.input?.validate(input);
      if (check !== undefined && !check.valid) {
        const error = new ToolSchemaValidationError({ direction: 'input', issues: check.issues, toolName: name, planId });
        if (this.hooks !== undefined) await this.hooks.onError(execution, tool, input, error)?.promise;
        return this.recorder.complete(execution, { ok: false, error }, 0);
      }
      // 4¼. The service's hooks before the call: the input rewritten (and checked again), or the call refused.
      if (this.hooks !== undefined) {
        const hooked = this.hooks.before(execution, tool, input);
        input = hooked instanceof HookPending ? await hooked.promise : hooked;
      }
      // A call with the caller's step id goes through the plan's journal: it may have been made before (here, or on a host that stopped).
      if (options?.step !== undefined) return await this.journaled.execute(execution, tool, instance, input, options);
      if (this.journaling) this.journaled.refuseWithoutStep(execution, this.plans.existing(ctx));
      // 4½. Approval, where a rule of the service or the plan's policy asks for it.
      const approval = this.approvals.approve(execution, tool, input);
      if (approval !== undefined) await approval;
      // 5. The call, timed and cancellable (with the tool's retries and limits, when it has some).
      let result = await this.calls.dispatch(execution, tool, instance, input, options);
      // 5½. The service's hooks after the call: the output redacted, replaced (and checked again) or withheld — before the budget, so a stored output is redacted too.
      if (this.hooks !== undefined) {
        const hooked = this.hooks.after(execution, tool, input, result);
        result = hooked instanceof HookPending ? await hooked.promise : hooked;
      }
      // 6. and 7. The output checked, the changes recorded, the execution traced; 6½. an output over the budget kept behind a handle.
      const finished = this.calls.finish(execution, tool, result);
      return this.results === undefined ? finished : this.results.limit(finished, ctx);
    } catch (thrown) {
      throw this.recorder.fail(execution, this.hooks === undefined ? thrown : await this.hooks.afterThrow(execution, tool, input, thrown));
    }
  }

  /**
   * The execution `view` was given to, while it is in flight: its plan
   * context, id, tool and step. For a tool that makes calls of its own in
   * the plan — each as `execute(name, input, caller.ctx, { parentExecutionId:
   * caller.executionId, step: innerCallStep(caller, n) })`, so that each goes
   * through the plan's policy, approval, limits and hooks, its trace names
   * its parent, and the plan's call journal has it. `undefined` for a view
   * this runtime did not make for an execution (an activation's view, a view
   * of another runtime, anything else).
   */
  callerOf(view: ToolExecutionContext): ToolCaller | undefined {
    if (typeof view !== 'object' || view === null) return undefined;
    const execution = executionsByView.get(view);
    if (execution === undefined) return undefined;
    const step = execution.extra?.step;
    return Object.freeze({ ctx: execution.ctx, executionId: execution.executionId, toolName: execution.toolName, ...(step === undefined ? {} : { step }) });
  }

  /**
   * Ends a plan: waits for its in-flight executions (at most the grace
   * period), then deactivates every tool activated in it, each exactly
   * once, and releases what the plan held. Idempotent; never throws —
   * failures are logged and reported.
   */
  async endPlan(ctx: PlanContext, options: { readonly graceMs?: number } = {}): Promise<PlanEndReport> {
    const planId = typeof ctx?.planId === 'string' ? ctx.planId : undefined;
    if (planId === undefined) {
      this.logger.error('endPlan was called without a plan context; nothing was ended.', {});
      return { planId: '', deactivated: [], failures: [], abandonedExecutions: 0, alreadyEnded: false };
    }
    // Approval requests still waiting are withdrawn: nobody will make their calls.
    this.approvals.endPlan(ctx);
    const report = await this.cache.release(planId, options);
    // The plan's stored results go with it.
    if (this.results !== undefined) await this.results.endPlan(ctx);
    if (this.registryLink !== undefined) await this.registryLink.detach(planId);
    return report;
  }

  /**
   * Creates a plan (registered first, with a plan registry), runs `fn` in it
   * and always ends the plan, also when `fn` throws — in which case the plan
   * is cancelled first, so executions `fn` left running stop. Resolves to what `fn` resolves to; the end report is
   * passed to `onEnd` when given.
   */
  async runPlan<T>(
    options: PlanOptions & { readonly onEnd?: (report: PlanEndReport) => void },
    fn: (ctx: PlanContext, runtime: ToolRuntime) => Promise<T> | T,
  ): Promise<T> {
    if (typeof fn !== 'function') {
      throw new ToolInvalidArgumentError({ argument: 'fn', expected: 'a function to run in the plan, (ctx, runtime) => …', received: fn });
    }
    const { onEnd, ...planOptions } = options ?? {};
    const ctx = this.createPlan(planOptions);
    let failed = false;
    try {
      if (this.registryLink !== undefined) await this.registryLink.whenRegistered(ctx.planId);
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

  /**
   * Calls `listener` whenever a source reports that its tools changed (an MCP
   * server's `list_changed`): the next `discover` or `listTools` lists them
   * again. For a front door that tells its own clients (`@ca/mcp-server`).
   * @returns A function that unsubscribes.
   * @throws ToolInvalidArgumentError when `listener` is not a function.
   */
  onToolsChanged(listener: () => void): () => void {
    if (typeof listener !== 'function') throw new ToolInvalidArgumentError({ argument: 'listener', expected: 'a function () => void', received: listener });
    return this.catalog.onChange(listener);
  }

  /**
   * Keeps a successful result's output behind a handle now, whatever the
   * output budget: for a front door whose own limit is below the budget
   * (`@ca/model-tools` renders a handle instead of cutting the text). Changes
   * `result` in place and returns it; without an output budget, for a
   * failure, or when it has a handle already, it is returned unchanged.
   */
  keepAsHandle<R extends ExecutionResult<unknown>>(result: R, ctx: PlanContext): R {
    return this.results === undefined ? result : (this.results.limit(result as unknown as ExecutionResult<never>, ctx, { force: true }) as unknown as R);
  }

  /** Unsubscribes from sources and disposes them (shared sessions, watchers). */
  dispose(): Promise<void> {
    return this.catalog.dispose();
  }

  /**
   * The link that keeps this runtime's plans in its plan registry: their
   * active tools, their waiting approval requests (listed only with
   * `registryApprovals`), and answers to them that come through the registry
   * (ignored with a warning without `registryApprovals`).
   * @throws ToolInvalidArgumentError when `registry` is not a PlanRegistry.
   */
  private linkToRegistry(registry: PlanRegistry, registryApprovals: boolean): PlanRegistryLink {
    return new PlanRegistryLink(registry, this.logger, {
      activeTools: (planId) => this.cache.activeTools(planId),
      pendingApprovals: (ctx) => (registryApprovals ? this.approvals.pendingSummaries(ctx) : []),
      answerApproval: (ctx, message) => {
        const description = registry.description ?? '';
        if (registryApprovals) {
          this.approvals.answerFromRegistry(ctx, message, description);
          return;
        }
        this.logger.warn(
          `Plan '${ctx.planId}' received an answer to an approval request through plan registry ${description}; this runtime does not take answers from its registry (option registryApprovals), so it was ignored.`,
          { planId: ctx.planId },
        );
      },
    });
  }
}

/** `options.parentExecutionId`, checked: an execution id (1–200 characters). */
function checkParent(parent: unknown, toolName: string, planId: string): string {
  if (typeof parent === 'string' && parent.length > 0 && parent.length <= 200) return parent;
  throw new ToolInvalidArgumentError({
    argument: 'options.parentExecutionId',
    expected: 'the id of the execution the call is made from (1–200 characters)',
    received: parent,
    toolName,
    planId,
  });
}

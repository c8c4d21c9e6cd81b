import type { SchemaValidator } from '@ca/schema';
import type { ApprovalHandler, ApprovalStore, ToolRuleDefinition } from './approval';
import { isTimeout } from './catalog';
import type { ToolCallSettings, ToolResumeSettings } from './calls';
import { ToolInvalidArgumentError } from './errors';
import type { ToolHook } from './hooks';
import type { CallJournal } from './journal';
import type { DefinitionPins } from './pins';
import type { ToolLifecycleCache, ToolLifecycleCacheOptions } from './plan';
import type { PlanRegistry } from './plan-registry';
import type { OutputBudgetOptions, ResultStore } from './results';
import type { ToolSearchReranker } from './search';
import type { RuntimeClock, RuntimeLogger } from './observability';
import type { ToolSource } from './tool';

/** Settings of a `ToolRuntime`. */
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
  /** How long one `activate` may take, in ms (default 60,000). */
  readonly activateTimeoutMs?: number;
  /** How long one `deactivate` may take, in ms (default 10,000). */
  readonly deactivateTimeoutMs?: number;
  /**
   * How long one source's discovery may take, in ms (default 60,000); a source
   * that misses it is reported in `sourceErrors` and the others still serve.
   */
  readonly discoverTimeoutMs?: number;
  /** Fail results whose output does not match `outputSchema`, for every tool. */
  readonly strictOutput?: boolean;
  /**
   * The service's rules: allow / deny / ask by tool-name pattern and
   * argument patterns, applied to every plan before its `policy.approval`
   * (see `ToolRuleDefinition`). Checked when the runtime is built, examples
   * included: a broken rule throws `ToolRuleError` there.
   */
  readonly rules?: readonly ToolRuleDefinition[];
  /** Retries and limits of the calls of tools, by tool-name pattern (see `ToolCallSettings`). */
  readonly calls?: readonly ToolCallSettings[];
  /** How long a call waits for an approval before it is refused (`timed-out`), in ms. Default: as long as the plan runs. */
  readonly approvalTimeoutMs?: number;
  /**
   * Take answers to approval requests from the plan registry (`agents plan
   * approve|deny`, a control plane): each plan lists its waiting requests in
   * its registration, and a `PlanApprovalMessage` answers one, racing the
   * `ApprovalHandler` (the first answer wins). Whoever may send messages to
   * the registry may then approve calls: turn it on only where the
   * registry's access is as narrow as approval's. Default `false` (approval
   * messages are ignored with a warning, and no request is listed).
   */
  readonly registryApprovals?: boolean;
  /**
   * Offer `tools.search`, a read-only tool a model calls to find the tools
   * it needs among every tool the plan may run (default `false`).
   */
  readonly searchTool?: boolean;
  /**
   * How much of an output a caller gets back whole, per tool and per plan.
   * With a budget, an output over it is kept in the result store behind a
   * handle and the caller gets a preview, and the runtime offers
   * `results.read` and `results.grep` to read it. Default: none (outputs are
   * handed back whole).
   */
  readonly outputBudget?: OutputBudgetOptions;
  /**
   * What to do about a call of a plan with a journal that was in flight when
   * its host stopped, by tool-name pattern (see `ToolResumeSettings`):
   * `retry` with the same idempotency key, or `ask` a person. It decides
   * before the tool's own reconciliation and capability.
   */
  readonly resume?: readonly ToolResumeSettings[];
}

/** What a `ToolRuntime` is built from; everything but the sources has a default. */
export interface ToolRuntimeSettings {
  readonly sources?: readonly ToolSource[];
  readonly validator?: SchemaValidator;
  readonly logger?: RuntimeLogger;
  readonly clock?: RuntimeClock;
  readonly cache?: ToolLifecycleCache;
  readonly options?: ToolRuntimeOptions;
  /** Asks a person about calls that need approval. Without one, such calls are refused (`no-handler`). */
  readonly approvalHandler?: ApprovalHandler;
  /**
   * Keeps `tool` and `call` approvals beyond the runtime, so that a plan
   * restarted with the same id does not ask again. Default: none (approvals
   * last as long as the plan in this runtime). Needs `approvalKey`.
   */
  readonly approvalStore?: ApprovalStore;
  /** The secret (at least 32 bytes) approval records are signed with; the same for every runtime that shares the store. */
  readonly approvalKey?: string | Uint8Array;
  /** Where the runtime announces its plans (see `PlanRegistry`); none by default. */
  readonly planRegistry?: PlanRegistry;
  /** The service's checks around every call, in the order they run (see `ToolHook`); none by default. */
  readonly hooks?: readonly ToolHook[];
  /** Pinned tool definitions (see `DefinitionPins`): a tool that no longer matches its pin is quarantined. None by default. */
  readonly pins?: DefinitionPins;
  /** A scorer of the service's own applied after the lexical ranking of `searchTools` (see `ToolSearchReranker`); none by default. */
  readonly searchReranker?: ToolSearchReranker;
  /** Where outputs over `options.outputBudget` are kept, per plan; default a `MemoryResultStore` (used only with a budget). */
  readonly resultStore?: ResultStore;
  /**
   * Where the calls of every plan are recorded (see `CallJournal`), for plans
   * without a journal of their own (`createPlan({ journal })`). Default: one
   * `MemoryCallJournal` per plan, used only by calls with a step id. With a
   * journal here, every call needs a step id.
   */
  readonly journal?: CallJournal;
}

/** How long one source's discovery may take by default, in ms. */
export const DEFAULT_DISCOVER_TIMEOUT_MS = 60_000;

/** @internal the lifecycle cache settings that the runtime options carry. */
export function cacheOptionsOf(options: ToolRuntimeOptions): ToolLifecycleCacheOptions {
  return {
    ...(options.endPlanGraceMs === undefined ? {} : { graceMs: options.endPlanGraceMs }),
    ...(options.activateTimeoutMs === undefined ? {} : { activateTimeoutMs: options.activateTimeoutMs }),
    ...(options.deactivateTimeoutMs === undefined ? {} : { deactivateTimeoutMs: options.deactivateTimeoutMs }),
  };
}

/**
 * Checks the settings a runtime is built from.
 * @throws ToolInvalidArgumentError for an option or an approval handler or store of the wrong shape.
 */
export function checkSettings(settings: ToolRuntimeSettings, options: ToolRuntimeOptions): void {
  checkOptions(options);
  checkApprovalSettings(settings);
}

function checkApprovalSettings(settings: ToolRuntimeSettings): void {
  const { approvalHandler, approvalStore } = settings;
  if (approvalHandler !== undefined && typeof (approvalHandler as { requestApproval?: unknown })?.requestApproval !== 'function') {
    throw new ToolInvalidArgumentError({
      argument: 'approvalHandler',
      expected: 'an ApprovalHandler: an object with requestApproval(request, context)',
      received: approvalHandler,
    });
  }
  if (approvalStore !== undefined) {
    const store = approvalStore as Partial<Record<'load' | 'save' | 'forget', unknown>> | null;
    if (typeof store?.load !== 'function' || typeof store.save !== 'function' || typeof store.forget !== 'function') {
      throw new ToolInvalidArgumentError({
        argument: 'approvalStore',
        expected: 'an ApprovalStore: an object with load(planId), save(record) and forget(planId)',
        received: approvalStore,
      });
    }
  }
}

function checkOptions(options: ToolRuntimeOptions): void {
  if (options.defaultTimeoutMs !== undefined) checkTimeout(options.defaultTimeoutMs, 'defaultTimeoutMs');
  if (options.endPlanGraceMs !== undefined && !(Number.isFinite(options.endPlanGraceMs) && options.endPlanGraceMs >= 0)) {
    throw new ToolInvalidArgumentError({ argument: 'endPlanGraceMs', expected: 'a number of milliseconds ≥ 0', received: options.endPlanGraceMs });
  }
  if (options.activateTimeoutMs !== undefined) checkTimeout(options.activateTimeoutMs, 'activateTimeoutMs');
  if (options.deactivateTimeoutMs !== undefined) checkTimeout(options.deactivateTimeoutMs, 'deactivateTimeoutMs');
  if (options.discoverTimeoutMs !== undefined) checkTimeout(options.discoverTimeoutMs, 'discoverTimeoutMs');
  if (options.approvalTimeoutMs !== undefined) checkTimeout(options.approvalTimeoutMs, 'approvalTimeoutMs');
  if (options.registryApprovals !== undefined && typeof options.registryApprovals !== 'boolean') {
    throw new ToolInvalidArgumentError({ argument: 'registryApprovals', expected: 'true or false', received: options.registryApprovals });
  }
  if (options.searchTool !== undefined && typeof options.searchTool !== 'boolean') {
    throw new ToolInvalidArgumentError({ argument: 'searchTool', expected: 'true or false', received: options.searchTool });
  }
}

/**
 * @internal A deadline option: a positive number of milliseconds `setTimeout` can hold.
 * @throws ToolInvalidArgumentError otherwise.
 */
export function checkTimeout(value: unknown, argument: string): void {
  if (!isTimeout(value)) {
    throw new ToolInvalidArgumentError({ argument, expected: 'a positive number of milliseconds (at most 2147483647)', received: value });
  }
}

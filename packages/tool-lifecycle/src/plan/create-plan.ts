import { CancellationToken, createExecutionContext, type PlanContext, type ToolExecutionContextOptions } from '@ca/tool-context';
import type { CallJournal } from '../journal';
import type { PlanRegistryOptions } from '../plan-registry';

/** Options of a plan: those of its context plus a deadline for the whole plan. */
export interface PlanOptions extends ToolExecutionContextOptions {
  /** Cancel the plan (and every execution in it) after this many ms. */
  readonly timeoutMs?: number;
  /**
   * The plan's registration when the runtime has a plan registry: labels to
   * show with it, or `false` to keep this plan out of the registry.
   */
  readonly registry?: PlanRegistryOptions | false;
  /**
   * Where the plan's calls are recorded (see `CallJournal`): a durable
   * journal lets the plan be resumed in another process with no step run
   * twice. Every call of such a plan needs a step id. Default: the runtime's
   * journal, else one in memory for the calls made with a step id.
   */
  readonly journal?: CallJournal;
}

/**
 * The context of a new plan, and the tokens made for it: a token that
 * follows `signal` or holds the plan's deadline belongs to the plan, which
 * disposes it when it ends. A token the caller passed stays the caller's.
 * @throws ContextValidationError (from @ca/tool-context) for invalid options; nothing is left behind.
 */
export function createPlanContext(
  options: ToolExecutionContextOptions,
  timeoutMs: number | undefined,
): { readonly ctx: PlanContext; readonly owned: readonly CancellationToken[] } {
  const { signal, ...contextOptions } = options;
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
  try {
    return { ctx: createExecutionContext(token === undefined ? contextOptions : { ...contextOptions, cancellationToken: token }), owned };
  } catch (error) {
    for (const created of owned) created.dispose();
    throw error;
  }
}

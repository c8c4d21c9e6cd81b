import { createCheckpoint, rollback, type BuiltinCheckpoint } from '@ca/adapters-builtin';
import type { BoundResource, PlanContext, PlanPolicy } from '@ca/tool-context';
import type { ToolRuntime } from '@ca/tool-lifecycle';
import type { DurablePlanFunction, DurableSteps } from '@ca/plan-restate';
import { EXIT_CODES, type ExitCode } from './exit-codes';
import { formatTable, preview } from './format-table';
import type { PlanFile, PlanStep } from './plan-file';
import { classify, formatSeconds, type StepOutcome, type StepReport } from './plan-runner';

/** The plan function every `agents worker` registers: it runs plan files sent by `agents plan run --durable`. */
export const PLAN_FILE_FUNCTION = 'plan-file';

/** What `agents plan run --durable` sends: the plan file as read on the starting host. */
export interface DurablePlanFileInput {
  readonly file: string;
  readonly description?: string;
  readonly steps: readonly PlanStep[];
}

/** What a durable plan file gives back: a report per step. */
export interface DurablePlanFileOutput {
  readonly steps: readonly StepReport[];
  /** Where the plan ended, as the worker names itself. */
  readonly host: string;
}

const STEP_ID = /^[\s\S]{1,1000}$/;

/** The plan file's parts that travel through Restate: the policy and resources go in the request, the steps as input. */
export function durableRequestOf(
  plan: PlanFile,
  baseResources: readonly BoundResource[],
): {
  readonly plan: string;
  readonly input: DurablePlanFileInput;
  readonly policy: PlanPolicy;
  readonly resources: BoundResource[];
  readonly labels: Record<string, string>;
} {
  const resources = new Map(baseResources.map((resource) => [resource.id, resource]));
  for (const resource of plan.resources) resources.set(resource.id, resource);
  return {
    plan: PLAN_FILE_FUNCTION,
    input: { file: plan.file, ...(plan.description === undefined ? {} : { description: plan.description }), steps: plan.steps },
    policy: plan.policy,
    resources: [...resources.values()],
    labels: { file: plan.file },
  };
}

/**
 * Checks what a worker was sent: hostile input is the normal case (anyone who
 * reaches Restate's ingress may start a plan).
 * @throws Error naming what is wrong (the workflow ends the plan as failed with it).
 */
function checkInput(input: unknown): DurablePlanFileInput {
  const candidate = input as Partial<DurablePlanFileInput> | null;
  if (typeof candidate !== 'object' || candidate === null || !Array.isArray(candidate.steps) || candidate.steps.length > 10_000) {
    throw new Error(`A durable plan file's input must be { file, steps: [...] } (at most 10,000 steps); got ${preview(input, 100)}.`);
  }
  const ids = new Set<string>();
  for (const [index, step] of candidate.steps.entries()) {
    const item = step as Partial<PlanStep> & { tool?: unknown; label?: unknown };
    const ok =
      typeof item === 'object' &&
      item !== null &&
      typeof item.id === 'string' &&
      STEP_ID.test(item.id) &&
      (item.kind === 'tool'
        ? typeof item.tool === 'string' && item.tool.length > 0
        : (item.kind === 'checkpoint' || item.kind === 'rollback') && typeof item.label === 'string');
    if (!ok) throw new Error(`Step ${index + 1} of the durable plan file is not a tool, checkpoint or rollback step with an id: ${preview(step, 100)}.`);
    // Step ids name the calls in the journal: two steps of one id would be one call.
    if (ids.has(item.id as string)) throw new Error(`Two steps of the durable plan file have id '${String(item.id)}'; give each step an id of its own.`);
    ids.add(item.id as string);
  }
  return candidate as DurablePlanFileInput;
}

function expected(outcome: StepOutcome, expectation: 'success' | 'failure' | 'refused'): boolean {
  if (expectation === 'success') return outcome === 'ok';
  if (expectation === 'refused') return outcome === 'refused';
  return outcome === 'failed' || outcome === 'refused';
}

/**
 * The plan function of plan files on a worker: the steps in order, each tool
 * call with its step id (the journal names it by plan id + step id on every
 * host), a checkpoint as the count of the plan's changes (rebuilt from the
 * journal on a resume), a rollback as a journaled step of its own (so that a
 * replay does not undo later changes again).
 */
export function planFileFunction(host: string): DurablePlanFunction {
  return async (ctx: PlanContext, input: unknown, runtime: ToolRuntime, durable: DurableSteps): Promise<DurablePlanFileOutput> => {
    const plan = checkInput(input);
    const steps: StepReport[] = [];
    const checkpoints = new Map<string, BuiltinCheckpoint>();
    let stopped = false;
    for (const step of plan.steps) {
      const tool = step.kind === 'tool' ? step.tool : `${step.kind} ${step.label}`;
      if (stopped) {
        steps.push({ id: step.id, tool, outcome: 'skipped', asExpected: false, durationMs: 0 });
        continue;
      }
      const started = performance.now();
      if (step.kind === 'checkpoint') {
        checkpoints.set(step.label, createCheckpoint(ctx));
        steps.push({ id: step.id, tool, outcome: 'ok', asExpected: true, durationMs: 0 });
        continue;
      }
      if (step.kind === 'rollback') {
        const checkpoint = checkpoints.get(step.label);
        try {
          if (checkpoint === undefined) throw new Error(`rollback names checkpoint '${step.label}', which no earlier step sets`);
          const report = await durable.run(`rollback ${step.id}`, () => rollback(ctx, checkpoint));
          steps.push({ id: step.id, tool, outcome: 'ok', asExpected: true, durationMs: performance.now() - started, output: report });
        } catch (error) {
          const { code, message } = classify(error, { command: 'plan' });
          steps.push({ id: step.id, tool, outcome: 'failed', asExpected: false, durationMs: performance.now() - started, code, message });
          stopped = true;
        }
        continue;
      }
      const expectation = step.expect ?? 'success';
      let report: StepReport;
      try {
        const result = await runtime.execute(
          step.tool,
          step.input ?? {},
          ctx,
          step.timeoutMs === undefined ? { step: step.id } : { step: step.id, timeoutMs: step.timeoutMs },
        );
        const durationMs = performance.now() - started;
        if (result.ok) report = { id: step.id, tool, outcome: 'ok', asExpected: expected('ok', expectation), durationMs, output: result.output };
        else {
          const { outcome, code, message } = classify(result.error, { command: 'plan' }, ctx.cancellationToken.isCancelled);
          report = { id: step.id, tool, outcome, asExpected: expected(outcome, expectation), durationMs, code, message };
        }
      } catch (error) {
        const { outcome, code, message } = classify(error, { command: 'plan' }, ctx.cancellationToken.isCancelled);
        report = { id: step.id, tool, outcome, asExpected: expected(outcome, expectation), durationMs: performance.now() - started, code, message };
      }
      steps.push(report);
      if (report.outcome === 'cancelled' || (!report.asExpected && !step.continueOnError)) stopped = true;
    }
    return { steps, host };
  };
}

/** The exit code of a plan's step reports, as for plain runs. */
export function exitCodeOfSteps(steps: readonly StepReport[]): ExitCode {
  if (steps.some((step) => step.outcome === 'cancelled')) return EXIT_CODES.cancelled;
  if (steps.every((step) => step.asExpected) && steps.length === steps.filter((step) => step.outcome !== 'skipped').length) return EXIT_CODES.ok;
  if (steps.some((step) => !step.asExpected && step.outcome === 'refused')) return EXIT_CODES.refused;
  if (steps.some((step) => !step.asExpected && step.outcome === 'not-found')) return EXIT_CODES.notFound;
  return EXIT_CODES.failed;
}

/** The summary table of a durable plan's steps. */
export function formatSteps(steps: readonly StepReport[]): string {
  return formatTable(
    ['step', 'tool', 'outcome', 'expected', 'ms', 'detail'],
    steps.map((step) => [
      step.id,
      step.tool,
      step.outcome,
      step.asExpected ? 'yes' : step.outcome === 'skipped' ? '-' : 'NO',
      step.durationMs.toFixed(1),
      step.outcome === 'ok'
        ? step.output === undefined
          ? ''
          : preview(step.output, 50)
        : `${step.code ?? ''}${step.message === undefined ? '' : `: ${preview(step.message, 60)}`}`,
    ]),
  );
}

export { formatSeconds };

import fs from 'node:fs';
import path from 'node:path';
import { createCheckpoint, rollback, type BuiltinCheckpoint } from '@ca/adapters-builtin';
import { ToolSchemaValidationError } from '@ca/schema';
import { ToolCancelledError, type ToolExecutionContext, type ToolExecutionTrace } from '@ca/tool-context';
import {
  ToolAccessDeniedError,
  ToolCheckpointRequiredError,
  ToolNotFoundError,
  type PlanEndReport,
  type ToolRuntime,
} from '@ca/tool-lifecycle';
import type { CliIo } from './cli-io';
import { EXIT_CODES, type ExitCode } from './exit-codes';
import { formatTable, preview } from './format-table';
import type { PlanFile } from './plan-file';

/** How one step ended. */
export type StepOutcome = 'ok' | 'failed' | 'refused' | 'cancelled' | 'not-found' | 'skipped';

/** One row of the summary. */
export interface StepReport {
  readonly id: string;
  readonly tool: string;
  readonly outcome: StepOutcome;
  /** Whether the outcome is what the step expected (`expect`). */
  readonly asExpected: boolean;
  readonly durationMs: number;
  readonly code?: string;
  readonly message?: string;
  readonly output?: unknown;
}

/** What running a plan produced. */
export interface PlanRunReport {
  readonly planId: string;
  readonly exitCode: ExitCode;
  readonly steps: readonly StepReport[];
  readonly traces: readonly ToolExecutionTrace[];
  readonly end: PlanEndReport | undefined;
}

/** Options of {@link runPlanFile}. */
export interface RunPlanOptions {
  readonly planId?: string;
  readonly tracesFile?: string;
  readonly json: boolean;
  /** Called with the plan context as soon as it exists (to wire cancellation). */
  readonly onStart?: (ctx: ToolExecutionContext) => Promise<void> | void;
}

/** Classifies a thrown error or failed result. */
export function classify(error: unknown): { outcome: StepOutcome; code: string; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'UNKNOWN';
  if (ToolCancelledError.isInstance(error)) return { outcome: 'cancelled', code, message };
  if (ToolAccessDeniedError.isInstance(error) || ToolCheckpointRequiredError.isInstance(error)) return { outcome: 'refused', code, message };
  if (ToolNotFoundError.isInstance(error)) return { outcome: 'not-found', code, message };
  if (ToolSchemaValidationError.isInstance(error)) return { outcome: 'failed', code, message };
  return { outcome: 'failed', code, message };
}

function expected(outcome: StepOutcome, expectation: 'success' | 'failure' | 'refused'): boolean {
  if (expectation === 'success') return outcome === 'ok';
  if (expectation === 'refused') return outcome === 'refused';
  return outcome === 'failed' || outcome === 'refused';
}

/**
 * Runs a plan file: one plan in the runtime, its steps in order, a progress
 * line per step, a summary table, traces as JSON Lines, and deactivation of
 * everything at the end — whatever happens.
 */
export async function runPlanFile(
  runtime: ToolRuntime,
  plan: PlanFile,
  baseResources: PlanFile['resources'],
  io: CliIo,
  options: RunPlanOptions,
): Promise<PlanRunReport> {
  const resources = new Map(baseResources.map((resource) => [resource.id, resource]));
  for (const resource of plan.resources) resources.set(resource.id, resource);
  const steps: StepReport[] = [];
  const checkpoints = new Map<string, BuiltinCheckpoint>();
  const say = (text: string) => (options.json ? undefined : io.stdout(text));
  let end: PlanEndReport | undefined;
  let planId = options.planId ?? plan.id ?? '';
  let traces: readonly ToolExecutionTrace[] = [];

  // Discover first, so that the first step's trace measures the tool, not
  // the start of every source.
  await runtime.discover();
  await runtime.runPlan(
    {
      ...(planId === '' ? {} : { planId }),
      policy: plan.policy,
      resources: [...resources.values()],
      ...(plan.timeoutMs === undefined ? {} : { timeoutMs: plan.timeoutMs }),
      onEnd: (report) => (end = report),
    },
    async (ctx) => {
      planId = ctx.planId;
      await options.onStart?.(ctx);
      const policy = [plan.policy.readOnly ? 'read-only' : 'read-write', plan.policy.requireCheckpoint ? 'checkpoints required' : undefined]
        .filter(Boolean)
        .join(', ');
      say(`Plan ${planId} (${policy}) — ${plan.steps.length} steps${plan.description ? `: ${plan.description}` : ''}\n`);
      let stopped = false;
      for (const [index, step] of plan.steps.entries()) {
        const label = `[${index + 1}/${plan.steps.length}] ${step.id}`;
        if (stopped) {
          steps.push({ id: step.id, tool: step.kind === 'tool' ? step.tool : step.kind, outcome: 'skipped', asExpected: false, durationMs: 0 });
          continue;
        }
        const started = performance.now();
        if (step.kind === 'checkpoint') {
          checkpoints.set(step.label, createCheckpoint(ctx));
          steps.push({ id: step.id, tool: `checkpoint ${step.label}`, outcome: 'ok', asExpected: true, durationMs: performance.now() - started });
          say(`${label} checkpoint '${step.label}' … ok\n`);
          continue;
        }
        if (step.kind === 'rollback') {
          say(`${label} rollback to '${step.label}' … `);
          try {
            const report = await rollback(ctx, checkpoints.get(step.label) as BuiltinCheckpoint);
            steps.push({ id: step.id, tool: `rollback ${step.label}`, outcome: 'ok', asExpected: true, durationMs: performance.now() - started, output: report });
            say(`ok (${preview(report, 100)})\n`);
          } catch (error) {
            const { code, message } = classify(error);
            steps.push({ id: step.id, tool: `rollback ${step.label}`, outcome: 'failed', asExpected: false, durationMs: performance.now() - started, code, message });
            say(`FAILED ${code}: ${message}\n`);
            stopped = true;
          }
          continue;
        }
        say(io.interactive ? `${label} ${step.tool} … running` : '');
        let report: StepReport;
        try {
          const result = await runtime.execute(step.tool, step.input, ctx, step.timeoutMs === undefined ? undefined : { timeoutMs: step.timeoutMs });
          const durationMs = performance.now() - started;
          if (result.ok) {
            report = { id: step.id, tool: step.tool, outcome: 'ok', asExpected: expected('ok', step.expect), durationMs, output: result.output };
          } else {
            const { outcome, code, message } = classify(result.error);
            report = { id: step.id, tool: step.tool, outcome, asExpected: expected(outcome, step.expect), durationMs, code, message };
          }
        } catch (error) {
          const { outcome, code, message } = classify(error);
          report = { id: step.id, tool: step.tool, outcome, asExpected: expected(outcome, step.expect), durationMs: performance.now() - started, code, message };
        }
        steps.push(report);
        const detail =
          report.outcome === 'ok'
            ? preview(report.output)
            : `${report.code}: ${report.message}${report.asExpected ? ' (expected)' : ''}`;
        say(`${io.interactive ? '\r\x1b[2K' : ''}${label} ${step.tool} … ${report.outcome} (${report.durationMs.toFixed(0)} ms) ${detail}\n`);
        if (report.outcome === 'cancelled') stopped = true;
        else if (!report.asExpected && !step.continueOnError) stopped = true;
      }
      traces = [...ctx.traces];
    },
  );

  if (options.tracesFile !== undefined) {
    fs.mkdirSync(path.dirname(path.resolve(io.cwd, options.tracesFile)), { recursive: true });
    fs.writeFileSync(path.resolve(io.cwd, options.tracesFile), traces.map((trace) => JSON.stringify(trace)).join('\n') + (traces.length > 0 ? '\n' : ''));
  }
  const exitCode = steps.some((step) => step.outcome === 'cancelled')
    ? EXIT_CODES.cancelled
    : steps.every((step) => step.asExpected || step.outcome === 'skipped') && !steps.some((step) => step.outcome === 'skipped')
      ? EXIT_CODES.ok
      : steps.some((step) => !step.asExpected && step.outcome === 'refused')
        ? EXIT_CODES.refused
        : steps.some((step) => !step.asExpected && step.outcome === 'not-found')
          ? EXIT_CODES.notFound
          : EXIT_CODES.failed;
  const endReport = end as PlanEndReport | undefined;
  if (options.json) {
    io.stdout(`${JSON.stringify({ planId, exitCode, steps, traces, end: endReport }, null, 2)}\n`);
  } else {
    io.stdout(
      '\n' +
        formatTable(
          ['step', 'tool', 'outcome', 'expected', 'ms', 'detail'],
          steps.map((step) => [
            step.id,
            step.tool,
            step.outcome,
            step.asExpected ? 'yes' : step.outcome === 'skipped' ? '-' : 'NO',
            step.durationMs.toFixed(1),
            step.outcome === 'ok' ? (step.output === undefined ? '' : preview(step.output, 50)) : step.code ?? '',
          ]),
        ),
    );
    const deactivated = endReport?.deactivated.length ?? 0;
    const failures = endReport?.failures.length ?? 0;
    io.stdout(
      `\nPlan ${planId} ${exitCode === EXIT_CODES.ok ? 'succeeded' : exitCode === EXIT_CODES.cancelled ? 'was cancelled' : 'failed'}; ${deactivated} tool(s) deactivated${
        failures > 0 ? `, ${failures} deactivation failure(s)` : ''
      }; ${traces.length} trace(s)${options.tracesFile === undefined ? '' : ` written to ${options.tracesFile}`}.\n`,
    );
  }
  return { planId, exitCode, steps, traces, end: endReport };
}

import fs from 'node:fs';
import path from 'node:path';
import { createCheckpoint, rollback, type BuiltinCheckpoint } from '@ca/adapters-builtin';
import { ToolSchemaValidationError } from '@ca/schema';
import { ToolCancelledError, type ToolExecutionContext, type ToolExecutionTrace } from '@ca/tool-context';
import {
  ToolAccessDeniedError,
  ToolApprovalDeniedError,
  ToolHookRefusedError,
  ToolCheckpointRequiredError,
  ToolActivationError,
  ToolDefinitionChangedError,
  ToolNotFoundError,
  ToolRegistrationError,
  type PlanEndReport,
  type ToolProgress,
  type ToolRuntime,
} from '@ca/tool-lifecycle';
import { explainError, type AdviceContext } from './cli-advice';
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
  /** Shown with the plan by `agents plan list` when the runtime has a plan registry (`{ file }`). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Called with the plan context as soon as it exists (to wire cancellation). */
  readonly onStart?: (ctx: ToolExecutionContext) => Promise<void> | void;
  /** The configuration file as the user would type it, named in advice. */
  readonly configFile?: string;
  /** Also print, on stderr, where a failing step's error came from (its cause's stack). */
  readonly verbose?: boolean;
}

/**
 * Classifies a thrown error or failed result, with the message a user of the
 * command should read (see {@link explainError}). A cancellation counts as
 * `cancelled` only when the plan itself was cancelled (Ctrl-C, `agents plan
 * cancel`, the plan's deadline); one execution's own deadline is a failure of
 * that step.
 */
/** Codes of an MCP server that cannot be reached at all. */
const SERVER_UNAVAILABLE: ReadonlySet<string> = new Set(['MCP_SERVER_START_FAILED', 'MCP_AUTH_REQUIRED', 'MCP_AUTH_FAILED']);

export function classify(
  error: unknown,
  context: AdviceContext = { command: 'plan' },
  planCancelled = true,
): { outcome: StepOutcome; code: string; message: string } {
  // A server that cannot be started or signed in to, met at activation (its tool list came from the cache),
  // is what it is when met at discovery: the tool is unavailable, with the server's error and advice.
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  if (ToolActivationError.isInstance(error) && typeof cause?.code === 'string' && SERVER_UNAVAILABLE.has(cause.code)) {
    return { outcome: 'not-found', ...explainError(cause, context) };
  }
  const { code, message } = explainError(error, context);
  if (ToolCancelledError.isInstance(error)) return { outcome: planCancelled ? 'cancelled' : 'failed', code, message };
  // A hook's refusal before the call is a refusal like the policy's (a withheld output, after the call, is a failure).
  const hookRefused = ToolHookRefusedError.isInstance(error) && error.stage === 'before';
  if (ToolAccessDeniedError.isInstance(error) || ToolCheckpointRequiredError.isInstance(error) || ToolApprovalDeniedError.isInstance(error) || hookRefused) {
    return { outcome: 'refused', code, message };
  }
  // A quarantined tool (its pinned definition changed) is unavailable, like one that cannot be registered: exit 4.
  if (ToolNotFoundError.isInstance(error) || ToolRegistrationError.isInstance(error) || ToolDefinitionChangedError.isInstance(error)) {
    return { outcome: 'not-found', code, message };
  }
  if (ToolSchemaValidationError.isInstance(error)) return { outcome: 'failed', code, message };
  return { outcome: 'failed', code, message };
}

/** Fewest milliseconds between two progress lines of one step off a terminal. */
const PROGRESS_LINE_INTERVAL_MS = 1_000;

/** `3/10 copying (4.2 s)`: a progress notification as one line's tail. */
export function describeProgress(progress: ToolProgress, elapsedMs: number): string {
  const count = progress.total === undefined ? `${progress.progress}` : `${progress.progress}/${progress.total}`;
  // A server chooses the message: no control characters (terminal escapes) reach the output.
  const text =
    typeof progress.message === 'string'
      ? progress.message
          // eslint-disable-next-line no-control-regex
          .replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, ' ')
          .trim()
          .slice(0, 200)
      : '';
  const message = text.length > 0 ? ` ${text}` : '';
  return `${count}${message} (${formatSeconds(elapsedMs)})`;
}

/** `850 ms`, `4.2 s`. */
export function formatSeconds(ms: number): string {
  return ms < 1_000 ? `${ms.toFixed(0)} ms` : `${(ms / 1_000).toFixed(1)} s`;
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
  const advice: AdviceContext = { command: 'plan', ...(options.configFile === undefined ? {} : { configFile: options.configFile }) };
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
      ...(options.labels === undefined ? {} : { registry: { labels: options.labels } }),
      onEnd: (report) => (end = report),
    },
    async (ctx) => {
      planId = ctx.planId;
      await options.onStart?.(ctx);
      const policy = [
        plan.policy.readOnly ? 'read-only' : 'read-write',
        plan.policy.requireCheckpoint ? 'checkpoints required' : undefined,
        plan.policy.network === 'deny' ? 'no network' : undefined,
      ]
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
            steps.push({
              id: step.id,
              tool: `rollback ${step.label}`,
              outcome: 'ok',
              asExpected: true,
              durationMs: performance.now() - started,
              output: report,
            });
            say(`ok (${preview(report, 100)})\n`);
          } catch (error) {
            const { code, message } = classify(error, advice);
            steps.push({
              id: step.id,
              tool: `rollback ${step.label}`,
              outcome: 'failed',
              asExpected: false,
              durationMs: performance.now() - started,
              code,
              message,
            });
            say(`FAILED ${code}: ${message}\n`);
            stopped = true;
          }
          continue;
        }
        // On a terminal the step's line is rewritten in place; in a pipe or a
        // CI log a line says that it started, one per progress notification
        // (at most one a second), and one that it ended, with its duration.
        say(io.interactive ? `${label} ${step.tool} … running` : `${label} ${step.tool} … started\n`);
        let lastProgressLine = Number.NEGATIVE_INFINITY;
        const onProgress = (progress: ToolProgress) => {
          const now = performance.now();
          const text = describeProgress(progress, now - started);
          if (io.interactive) {
            say(`\r\x1b[2K${label} ${step.tool} … running ${text}`);
          } else if (now - lastProgressLine >= PROGRESS_LINE_INTERVAL_MS) {
            lastProgressLine = now;
            say(`${label} ${step.tool} … progress ${text}\n`);
          }
        };
        const context = { ...advice, inputSchema: (await runtime.describe(step.tool).catch(() => undefined))?.inputSchema };
        let report: StepReport;
        let thrown: unknown;
        try {
          // The step's id makes the call's idempotency key the same whenever the plan runs it again.
          const result = await runtime.execute(
            step.tool,
            step.input,
            ctx,
            step.timeoutMs === undefined ? { onProgress, step: step.id } : { timeoutMs: step.timeoutMs, onProgress, step: step.id },
          );
          const durationMs = performance.now() - started;
          if (result.ok) {
            report = { id: step.id, tool: step.tool, outcome: 'ok', asExpected: expected('ok', step.expect), durationMs, output: result.output };
          } else {
            thrown = result.error;
            const { outcome, code, message } = classify(result.error, context, ctx.cancellationToken.isCancelled);
            report = { id: step.id, tool: step.tool, outcome, asExpected: expected(outcome, step.expect), durationMs, code, message };
          }
        } catch (error) {
          thrown = error;
          const { outcome, code, message } = classify(error, context, ctx.cancellationToken.isCancelled);
          report = {
            id: step.id,
            tool: step.tool,
            outcome,
            asExpected: expected(outcome, step.expect),
            durationMs: performance.now() - started,
            code,
            message,
          };
        }
        steps.push(report);
        if (options.verbose === true && report.outcome !== 'ok' && thrown !== undefined) {
          const cause = (thrown as { cause?: unknown }).cause;
          const stack = cause instanceof Error ? cause.stack : thrown instanceof Error ? thrown.stack : undefined;
          if (stack !== undefined) io.stderr(`${label} ${step.tool}: ${stack}\n`);
        }
        const detail = report.outcome === 'ok' ? preview(report.output) : `${report.code}: ${report.message}${report.asExpected ? ' (expected)' : ''}`;
        say(`${io.interactive ? '\r\x1b[2K' : ''}${label} ${step.tool} … ${report.outcome} (${formatSeconds(report.durationMs)}) ${detail}\n`);
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
            step.outcome === 'ok' ? (step.output === undefined ? '' : preview(step.output, 50)) : (step.code ?? ''),
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

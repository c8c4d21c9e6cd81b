import { randomUUID } from 'node:crypto';
import type { BoundResource } from '@ca/tool-context';
import type { DurablePlanClient, DurablePlanSummary } from '@ca/plan-restate';
import { CliError } from './cli-error';
import type { CliIo } from './cli-io';
import path from 'node:path';
import { findConfigFile, type AgentsConfig, type DurableConfig } from './config';
import { expandVariables } from './expand-variables';
import { readDocument } from './read-document';
import { validateDocument } from './validate-document';
import { durableRequestOf, exitCodeOfSteps, formatSteps, type DurablePlanFileOutput } from './durable-plan-file';
import { EXIT_CODES, type ExitCode } from './exit-codes';
import { formatTable } from './format-table';
import type { PlanFile } from './plan-file';

// Restate's SDK and the durable client are loaded only by the commands that use them: `npm start` and plain plans need no Restate.
const loadRestate = () => require('@ca/plan-restate') as typeof import('@ca/plan-restate');

/** How often a command that follows a durable plan looks at its host and approval requests, in ms. */
const FOLLOW_INTERVAL_MS = 500;

/**
 * Only the `durable` key of the configuration, for `plan list|approve|deny|cancel`: an operator's shell needs
 * neither the configuration's tools nor their variables (as for the `registry` key).
 * @throws CliError (CLI_CONFIG_NOT_FOUND, CLI_CONFIG_INVALID) for a named file that is missing or a durable key that is invalid.
 */
export function loadDurableConfig(options: {
  readonly file?: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}): DurableConfig | undefined {
  const file = findConfigFile(options);
  if (file === undefined) return undefined;
  const raw = readDocument(file, { notFound: 'CLI_CONFIG_NOT_FOUND', invalid: 'CLI_CONFIG_INVALID' }, 'Configuration');
  const durable = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>)['durable'] : undefined;
  if (durable === undefined) return undefined;
  let expanded: unknown;
  try {
    expanded = expandVariables(durable, options.env, '/durable');
  } catch (error) {
    throw new CliError({ code: 'CLI_CONFIG_INVALID', message: `Configuration ${path.resolve(file)}: ${(error as Error).message}` });
  }
  validateDocument('config', { durable: expanded }, file, 'CLI_CONFIG_INVALID');
  return expanded as DurableConfig;
}

/**
 * The durable section, required.
 * @throws CliError `CLI_USAGE` naming what to add to the configuration.
 */
export function requireDurable(config: Pick<AgentsConfig, 'durable' | 'file'>, what: string): DurableConfig {
  const durable = config.durable;
  if (durable !== undefined) return durable;
  throw new CliError({
    code: 'CLI_USAGE',
    message: `${what} needs Restate, and the configuration${config.file === undefined ? ' (none was found)' : ` ${config.file}`} has no "durable" section. Add "durable": { "ingressUrl": "http://restate:8080", "adminUrl": "http://restate:9070" }.`,
  });
}

/** A client of the configured Restate server. */
export function durableClient(durable: DurableConfig): DurablePlanClient {
  const { DurablePlanClient } = loadRestate();
  return new DurablePlanClient({
    ingressUrl: durable.ingressUrl,
    adminUrl: durable.adminUrl,
    ...(durable.workflow === undefined ? {} : { workflow: durable.workflow }),
    ...(durable.journalKey === undefined ? {} : { journalKey: durable.journalKey }),
  });
}

/** A durable client's error as the command's: exit codes as for plain plans (not found 4, usage 2, Restate unreachable 1). */
export function asCliError(error: unknown): unknown {
  const { DurablePlanError } = loadRestate();
  if (!DurablePlanError.isInstance(error)) return error;
  switch (error.code) {
    case 'DURABLE_PLAN_NOT_FOUND':
      return new CliError({ code: 'CLI_PLAN_NOT_FOUND', exitCode: EXIT_CODES.notFound, message: error.message, cause: error });
    case 'DURABLE_PLAN_APPROVAL_NOT_FOUND':
      return new CliError({ code: 'CLI_APPROVAL_NOT_FOUND', exitCode: EXIT_CODES.notFound, message: error.message, cause: error });
    case 'DURABLE_PLAN_DUPLICATE':
    case 'DURABLE_PLAN_INVALID_ARGUMENT':
      return new CliError({ code: 'CLI_USAGE', message: error.message, cause: error });
    default:
      return new CliError({ code: 'CLI_DURABLE_UNAVAILABLE', exitCode: EXIT_CODES.failed, message: error.message, cause: error });
  }
}

async function coded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asCliError(error);
  }
}

/** What `agents plan run --durable` needs from `main`. */
export interface DurableRunContext {
  readonly io: CliIo;
  readonly json: boolean;
  /** Calls `stop` on Ctrl-C and SIGTERM while `work` runs; a second signal exits at once. */
  readonly withInterrupt: <T>(stop: (reason: string) => void, work: () => Promise<T>) => Promise<T>;
}

/** True when a failure of the plan's output says it was cancelled (the workflow ends a cancelled plan so). */
function wasCancelled(message: string, planId: string): boolean {
  return message.includes(`plan '${planId}' was cancelled`);
}

/**
 * `agents plan run --durable`: starts the plan file through Restate (the
 * workers of the configuration's Restate run it) and follows it to its end —
 * where it runs, the approval requests it waits for (answered with `agents
 * plan approve` from any host), its steps — then prints the summary. Exit
 * codes as for a plain run; Ctrl-C cancels the plan (130), `--detach` only starts it.
 */
export async function runDurablePlanFile(
  plan: PlanFile,
  config: AgentsConfig,
  options: { readonly planId?: string; readonly detach?: boolean },
  context: DurableRunContext,
): Promise<ExitCode> {
  const { io } = context;
  const durable = requireDurable(config, 'agents plan run --durable');
  const client = durableClient(durable);
  const planId = options.planId ?? plan.id ?? randomUUID();
  const request = durableRequestOf(plan, config.resources as BoundResource[]);
  const say = (text: string) => (context.json ? undefined : io.stdout(text));
  await coded(() => client.start(planId, request));
  if (options.detach === true) {
    if (context.json) io.stdout(`${JSON.stringify({ planId, durable: true, started: true })}\n`);
    else io.stdout(`Durable plan ${planId} started (${plan.steps.length} steps). 'agents plan list' shows where it runs.\n`);
    return EXIT_CODES.ok;
  }
  say(`Durable plan ${planId} — ${plan.steps.length} steps${plan.description ? `: ${plan.description}` : ''}; Ctrl-C cancels it.\n`);
  const stop = new AbortController();
  let cancelRequested = false;
  // While it runs: where, and which approval requests it waits for (said once each).
  const seen = new Set<string>();
  let lastWhere = '';
  const watch = (async () => {
    while (!stop.signal.aborted) {
      const [status, pending] = await Promise.all([client.status(planId).catch(() => undefined), client.pending(planId).catch(() => [])]);
      const where = status === undefined ? '' : `${status.host}|${status.resumes}`;
      if (status !== undefined && where !== lastWhere && status.state !== 'succeeded' && status.state !== 'failed' && status.state !== 'cancelled') {
        lastWhere = where;
        io.stderr(
          `plan ${planId}: ${status.state} on ${status.host}${status.resumes > 0 ? ` (resumed ${status.resumes} time${status.resumes === 1 ? '' : 's'})` : ''}\n`,
        );
      }
      for (const request of pending) {
        if (seen.has(request.requestId)) continue;
        seen.add(request.requestId);
        io.stderr(
          `plan ${planId} waits for approval ${request.requestId} (${request.toolName}${request.step === undefined ? '' : `, step ${request.step}`}): ${request.reason}\n` +
            `  answer from any host: agents plan approve ${planId} ${request.requestId}   (or: agents plan deny ${planId} ${request.requestId})\n`,
        );
      }
      // Not unref'd: the command must stay alive until it has printed the plan's end.
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          stop.signal.removeEventListener('abort', wake);
          resolve();
        }, FOLLOW_INTERVAL_MS);
        stop.signal.addEventListener('abort', wake, { once: true });
      });
    }
  })();
  let output: DurablePlanFileOutput | undefined;
  let failure: string | undefined;
  try {
    await context.withInterrupt(
      (reason) => {
        if (cancelRequested) return;
        cancelRequested = true;
        io.stderr(`plan ${planId}: ${reason}; cancelling it through Restate.\n`);
        client.cancel(planId).catch((error: unknown) => io.stderr(`plan ${planId}: the cancel failed: ${(error as Error).message}\n`));
      },
      async () => {
        try {
          output = (await client.output(planId)) as DurablePlanFileOutput;
        } catch (error) {
          const { DurablePlanError } = loadRestate();
          if (!DurablePlanError.isInstance(error) || error.code !== 'DURABLE_PLAN_FAILED') throw asCliError(error);
          failure = error.message;
        }
      },
    );
  } finally {
    stop.abort();
    await watch;
  }
  if (failure !== undefined) {
    const cancelled = wasCancelled(failure, planId);
    if (context.json)
      io.stdout(`${JSON.stringify({ planId, durable: true, exitCode: cancelled ? EXIT_CODES.cancelled : EXIT_CODES.failed, error: failure }, null, 2)}\n`);
    else io.stdout(`\nDurable plan ${planId} ${cancelled ? 'was cancelled' : `failed: ${failure}`}.\n`);
    return cancelled ? EXIT_CODES.cancelled : EXIT_CODES.failed;
  }
  const steps = Array.isArray(output?.steps) ? output.steps : [];
  const exitCode = exitCodeOfSteps(steps);
  if (context.json) {
    io.stdout(`${JSON.stringify({ planId, durable: true, exitCode, host: output?.host, steps }, null, 2)}\n`);
  } else {
    io.stdout(`\n${formatSteps(steps)}`);
    io.stdout(
      `\nDurable plan ${planId} ${exitCode === EXIT_CODES.ok ? 'succeeded' : exitCode === EXIT_CODES.cancelled ? 'was cancelled' : 'failed'}; it ended on ${String(output?.host)}.\n`,
    );
  }
  return exitCode;
}

/** The durable plans Restate runs (or all, with ended ones), or undefined when Restate cannot be reached (said on stderr). */
export async function listDurablePlans(durable: DurableConfig, io: CliIo): Promise<DurablePlanSummary[] | undefined> {
  try {
    return await durableClient(durable).list();
  } catch (error) {
    io.stderr(`warning: durable plans could not be listed: ${(asCliError(error) as Error).message}\n`);
    return undefined;
  }
}

/** `agents plan list`'s table of durable plans. */
export function formatDurablePlans(plans: readonly DurablePlanSummary[]): string {
  return formatTable(
    ['durable plan', 'host', 'state', 'resumed', 'restate', 'started', 'waits for'],
    plans.map((plan) => [
      plan.planId,
      plan.status?.host ?? '',
      plan.status?.state ?? '',
      plan.status === undefined ? '' : String(plan.status.resumes),
      plan.invocation,
      plan.createdAt,
      plan.pending.map((request) => `approval ${request.requestId} (${request.toolName})`).join(', '),
    ]),
    100,
  );
}

/**
 * Whether `planId` is a durable plan Restate runs now (so that `approve`,
 * `deny` and `cancel` go to Restate rather than to the plan registry).
 * Restate that cannot be reached counts as no (said on stderr).
 */
export async function isRunningDurablePlan(durable: DurableConfig, planId: string, io: CliIo): Promise<boolean> {
  const plans = await listDurablePlans(durable, io);
  return plans?.some((plan) => plan.planId === planId) ?? false;
}

/** `agents plan approve|deny` of a durable plan: answers its approval request through Restate. */
export async function answerDurablePlan(
  durable: DurableConfig,
  planId: string,
  requestId: string | undefined,
  answer: { readonly decision: 'approve'; readonly scope: 'once' | 'tool' | 'call' } | { readonly decision: 'deny'; readonly reason?: string },
  sentBy: string,
  io: CliIo,
): Promise<void> {
  const client = durableClient(durable);
  const answered = await coded(() =>
    client.answer(planId, { ...answer, ...(requestId === undefined ? {} : { requestId }), sentBy } as Parameters<DurablePlanClient['answer']>[1]),
  );
  io.stdout(
    answer.decision === 'approve'
      ? `Approved request ${answered} of durable plan ${planId}${answer.scope === 'once' ? '' : ` for the rest of the plan (${answer.scope})`}.\n`
      : `Denied request ${answered} of durable plan ${planId}.\n`,
  );
}

/** `agents plan cancel` of a durable plan: Restate cancels it, the running tool sees its signal wherever it runs. */
export async function cancelDurablePlan(durable: DurableConfig, planId: string, io: CliIo): Promise<void> {
  await coded(() => durableClient(durable).cancel(planId));
  io.stdout(`Cancellation of durable plan ${planId} requested.\n`);
}

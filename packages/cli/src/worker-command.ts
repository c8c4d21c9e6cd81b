import os from 'node:os';
import path from 'node:path';
import type { RuntimeLogger } from '@ca/tool-lifecycle';
import type { Command } from 'commander';
import { loadRules } from './approval-config';
import { buildRuntime, type BuiltRuntime } from './build-runtime';
import { CliError } from './cli-error';
import type { CliIo } from './cli-io';
import type { AgentsConfig } from './config';
import { asCliError, durableClient, requireDurable } from './durable-commands';
import { PLAN_FILE_FUNCTION, planFileFunction } from './durable-plan-file';
import { EXIT_CODES, type ExitCode } from './exit-codes';
import { FileResultStore } from './file-result-store';
import { FileTokenStore } from './file-token-store';

/** What `agents worker` needs from `main`. */
export interface WorkerContext {
  readonly io: CliIo;
  readonly loadConfiguration: () => AgentsConfig;
  readonly startTracing: () => void;
  readonly createLogger: () => RuntimeLogger;
  readonly stateDir: () => string;
  readonly setExitCode: (code: ExitCode) => void;
  /** Calls `stop` on Ctrl-C (SIGINT) and SIGTERM while `work` runs; a second signal exits at once. */
  readonly withInterrupt: <T>(stop: (reason: string) => void, work: () => Promise<T>) => Promise<T>;
}

interface WorkerFlags {
  readonly port: string;
  readonly bind: string;
  readonly register?: string;
  readonly name?: string;
  readonly drainTimeout: string;
}

const loadRestate = () => require('@ca/plan-restate') as typeof import('@ca/plan-restate');

function integer(text: string, flag: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max)
    throw new CliError({ code: 'CLI_USAGE', message: `${flag} ${text}: expected an integer from ${min} to ${max}.` });
  return value;
}

/**
 * `agents worker`: the long-running process of a host that serves durable
 * plans. It builds the runtime from the configuration as every command does
 * (sources, policy, rules, sandbox, guardrails), serves the plan workflow to
 * Restate on `--port`, and runs the plan files `agents plan run --durable`
 * starts — or resumes those another worker was running when it died. SIGTERM
 * drains it: no new invocation, the running ones end or suspend (at most
 * `--drain-timeout`), then it exits; Restate resumes what is left elsewhere.
 */
export function addWorkerCommand(program: Command, context: WorkerContext): void {
  const { io } = context;
  program
    .command('worker')
    .description(
      "serve durable plans to Restate (the configuration's \"durable\" section): run the plan files 'agents plan run --durable' starts, resume those of hosts that died; SIGTERM drains",
    )
    .option('--port <port>', 'port to serve Restate on (0: a free one)', '9080')
    .option('--bind <address>', 'address to serve on', '127.0.0.1')
    .option('--register <url>', "register this URL with Restate's admin API: the address in front of the workers (a load balancer), or this worker's own")
    .option('--name <host>', 'how this worker names itself in statuses and journal entries (default: <hostname> pid <pid>)')
    .option('--drain-timeout <ms>', 'on SIGTERM, how long running plans may take to end or suspend before the worker exits', '30000')
    .action(async (local: WorkerFlags) => {
      const port = integer(local.port, '--port', 0, 65_535);
      const drainTimeoutMs = integer(local.drainTimeout, '--drain-timeout', 0, 86_400_000);
      const config = context.loadConfiguration();
      const durable = requireDurable(config, 'agents worker');
      // eslint-disable-next-line no-control-regex
      const name = (local.name ?? `${os.hostname()} pid ${process.pid}`).replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').slice(0, 200);
      // The SDK logs every invocation it starts on stdout; a worker says what matters itself (RESTATE_LOGGING=INFO shows them).
      process.env['RESTATE_LOGGING'] ??= 'WARN';
      const restate = loadRestate();
      const rules = loadRules(config, [], io);
      const logger = context.createLogger();
      context.startTracing();
      // Approvals are durable promises of each plan (answered from any host), never kept on this host.
      const approvals = new restate.DurableApprovalRouter();
      let built: BuiltRuntime | undefined;
      let host: Awaited<ReturnType<typeof restate.serveDurablePlans>> | undefined;
      try {
        built = await buildRuntime(config, logger, {
          approval: { handler: approvals, rules: rules.definitions },
          mcp: { tokenStore: new FileTokenStore(path.join(context.stateDir(), 'mcp-auth')) },
          ...(config.runtime?.outputBudget === undefined ? {} : { resultStore: new FileResultStore(path.join(context.stateDir(), 'results')) }),
        });
        const discovery = await built.runtime.discover();
        for (const item of discovery.unavailable) io.stderr(`agents worker: unavailable: ${item.name} — ${item.reason}\n`);
        for (const item of discovery.sourceErrors) io.stderr(`agents worker: source ${item.sourceId} failed: ${item.error.message}\n`);
        const workflow = restate.createPlanWorkflow({
          runtime: built.runtime,
          approvals,
          host: name,
          ingressUrl: durable.ingressUrl,
          ...(durable.workflow === undefined ? {} : { name: durable.workflow }),
          plans: { [PLAN_FILE_FUNCTION]: planFileFunction(name) },
        });
        try {
          host = await restate.serveDurablePlans(workflow, {
            port,
            bindAddress: local.bind,
            ...(durable.journalKey === undefined ? {} : { journalKey: durable.journalKey }),
          });
        } catch (error) {
          throw new CliError({
            code: 'CLI_USAGE',
            message: `agents worker cannot serve on ${local.bind}:${port}: ${(error as Error).message}. Choose another --port or --bind.`,
            cause: error,
          });
        }
        if (local.register !== undefined) {
          const register = local.register;
          try {
            await durableClient(durable).register(register);
          } catch (error) {
            throw asCliError(error);
          }
        }
        const running = host;
        io.stdout(
          `agents worker ${name}: serving durable plans at ${running.url} (workflow ${workflow.name}, ${discovery.tools.length} tool(s))${
            local.register === undefined ? '' : `, registered ${local.register}`
          }. SIGTERM drains.\n`,
        );
        let stop!: (reason: string) => void;
        const stopped = new Promise<string>((resolve) => (stop = resolve));
        const reason = await context.withInterrupt(
          (why) => stop(why),
          () => stopped,
        );
        io.stderr(`agents worker ${name}: ${reason}; draining (${running.active()} running, at most ${drainTimeoutMs} ms).\n`);
        const left = await running.drain(drainTimeoutMs);
        host = undefined;
        io.stderr(`agents worker ${name}: stopped${left === 0 ? '' : `; ${left} plan(s) were still running and resume on another worker`}.\n`);
        context.setExitCode(EXIT_CODES.ok);
      } finally {
        await host?.close();
        await built?.dispose();
      }
    });
}

import fs from 'node:fs';
import path from 'node:path';
import { resourceFromPath, type BoundResource, type ToolExecutionContext } from '@ca/tool-context';
import { Command, CommanderError } from 'commander';
import { buildRuntime, type BuiltRuntime } from './build-runtime';
import { CliError } from './cli-error';
import type { CliIo } from './cli-io';
import { createCliLogger } from './cli-logger';
import { loadConfig } from './config';
import { EXIT_CODES, type ExitCode } from './exit-codes';
import { formatTable } from './format-table';
import { loadPlanFile } from './plan-file';
import { PlanRegistry, checkPlanId, resolveStateDir } from './plan-registry';
import { classify, runPlanFile } from './plan-runner';

interface GlobalOptions {
  readonly config?: string;
  readonly json?: boolean;
  readonly stateDir?: string;
  readonly verbose?: boolean;
}

/** Installs Ctrl-C handling for the duration of `work`: the first cancels, a second exits at once. */
async function withInterrupt<T>(cancel: (reason: string) => void, work: () => Promise<T>): Promise<T> {
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++;
    if (interrupts > 1) process.exit(EXIT_CODES.cancelled);
    cancel(`interrupted (${signal})`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A tool may wait on nothing but its cancellation signal; the command must
  // stay alive (and cancellable) until it settles instead of exiting silently.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    return await work();
  } finally {
    clearInterval(keepAlive);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function parseInput(text: string, cwd: string): unknown {
  let source = text;
  if (text.startsWith('@')) {
    const file = path.resolve(cwd, text.slice(1));
    try {
      source = fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw new CliError({ code: 'CLI_INPUT_INVALID', message: `--input ${text}: cannot read ${file} (${(error as Error).message}).`, cause: error });
    }
  }
  try {
    return JSON.parse(source);
  } catch (error) {
    throw new CliError({
      code: 'CLI_INPUT_INVALID',
      message: `--input is not valid JSON (${(error as Error).message}). Pass a JSON object, e.g. --input '{"path":"README.md"}', or @file.json.`,
      cause: error,
    });
  }
}

function parseResource(text: string, cwd: string, previous: BoundResource[] = []): BoundResource[] {
  const match = /^([A-Za-z0-9_.-]+)=(.+?)(?::(read|write))?$/.exec(text);
  if (match === null) {
    throw new CliError({ code: 'CLI_USAGE', message: `--resource ${text}: expected id=path[:read|write], e.g. --resource work=./tmp:write.` });
  }
  const [, id, location, access] = match as unknown as [string, string, string, 'read' | 'write' | undefined];
  return [...previous, resourceFromPath({ id, path: path.resolve(cwd, location), access: access ?? 'read' })];
}

/**
 * Runs the `agents` command with `argv` (without the node and script
 * arguments) and resolves to its exit code. Never calls `process.exit`
 * except on a second Ctrl-C.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  let exitCode: ExitCode = EXIT_CODES.ok;
  let built: BuiltRuntime | undefined;
  const program = new Command('agents')
    .description('Run tools from MCP servers, Agent Skills, built-ins, custom and wrapped tools through one lifecycle, inside plans.')
    .option('-c, --config <file>', 'configuration file (default: agents.config.json|yaml in the current folder)')
    .option('--json', 'machine-readable output')
    .option('--state-dir <dir>', 'where running plans are announced (default $AGENTS_STATE_DIR or ~/.local/state/agents)')
    .option('-v, --verbose', 'log debug details to stderr')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(run agents --help for usage)');

  const globals = (): GlobalOptions => program.opts<GlobalOptions>();
  // --json may be given before the command or after it.
  const wantsJson = (local: { readonly json?: boolean }): boolean => local.json === true || globals().json === true;
  const planRegistry = (): PlanRegistry => new PlanRegistry(resolveStateDir(globals().stateDir, io.env));
  const runtime = async () => {
    const options = globals();
    const config = loadConfig({ ...(options.config === undefined ? {} : { file: options.config }), cwd: io.cwd, env: io.env });
    built = await buildRuntime(config, createCliLogger(io.stderr, options.verbose === true));
    return { config, runtime: built.runtime };
  };

  const tools = program.command('tools').description('list, describe and run tools');
  tools
    .command('list')
    .description('discover the tools of every configured source')
    .option('--json', 'machine-readable output')
    .action(async (local: { json?: boolean }) => {
      const { runtime: rt } = await runtime();
      const discovery = await rt.discover();
      if (wantsJson(local)) {
        io.stdout(`${JSON.stringify(discovery, (key, value: unknown) => (key === 'error' && value instanceof Error ? { name: value.name, message: value.message } : value), 2)}\n`);
        return;
      }
      io.stdout(
        formatTable(
          ['name', 'source', 'writes', 'checkpointable', 'description'],
          discovery.tools.map((tool) => [tool.name, tool.source, tool.capability.writes ? 'yes' : 'no', tool.capability.checkpointable ? 'yes' : 'no', tool.description]),
        ),
      );
      for (const item of discovery.unavailable) io.stderr(`unavailable: ${item.name} — ${item.reason}\n`);
      for (const item of discovery.sourceErrors) io.stderr(`source ${item.sourceId} failed: ${item.error.message}\n`);
      io.stdout(`\n${discovery.tools.length} tool(s)${discovery.unavailable.length > 0 ? `, ${discovery.unavailable.length} unavailable` : ''}.\n`);
    });

  tools
    .command('describe <name>')
    .description("show a tool's schemas and capabilities")
    .option('--json', 'machine-readable output')
    .action(async (name: string, local: { json?: boolean }) => {
      const { runtime: rt } = await runtime();
      const descriptor = await rt.describe(name);
      if (wantsJson(local)) {
        io.stdout(`${JSON.stringify(descriptor, null, 2)}\n`);
        return;
      }
      const capability = descriptor.capability;
      io.stdout(
        `${descriptor.name}  (${descriptor.source}${descriptor.version ? ` ${descriptor.version}` : ''})\n\n${descriptor.description}\n\n` +
          `capability: writes=${capability.writes} checkpointable=${capability.checkpointable} idempotent=${capability.idempotent} destructive=${capability.destructive} openWorld=${capability.openWorld}\n` +
          `${descriptor.timeoutMs === undefined ? '' : `timeout: ${descriptor.timeoutMs} ms\n`}` +
          `\ninput schema:\n${JSON.stringify(descriptor.inputSchema ?? true, null, 2)}\n\noutput schema:\n${JSON.stringify(descriptor.outputSchema ?? true, null, 2)}\n`,
      );
    });

  tools
    .command('run <name>')
    .description('run one tool in a one-step plan')
    .option('-i, --input <json|@file>', 'the input, as JSON or @file.json', '{}')
    .option('--read-only', 'run in a read-only plan')
    .option('--require-checkpoint', 'run in a plan that requires checkpointable tools')
    .option('--timeout <ms>', 'deadline of the execution in ms')
    .option('--resource <id=path[:read|write]>', 'bind a folder or file (repeatable)', (value: string, previous: BoundResource[]) => parseResource(value, io.cwd, previous), [] as BoundResource[])
    .option('--plan-id <id>', 'id of the plan')
    .option('--json', 'machine-readable output')
    .action(async (name: string, local: { input: string; readOnly?: boolean; requireCheckpoint?: boolean; timeout?: string; resource: BoundResource[]; planId?: string; json?: boolean }) => {
      const input = parseInput(local.input, io.cwd);
      const timeoutMs = local.timeout === undefined ? undefined : Number(local.timeout);
      if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) {
        throw new CliError({ code: 'CLI_USAGE', message: `--timeout ${local.timeout}: expected a positive whole number of milliseconds.` });
      }
      if (local.planId !== undefined) checkPlanId(local.planId);
      const { config, runtime: rt } = await runtime();
      await rt.discover();
      const resources = new Map(config.resources.map((resource) => [resource.id, resource]));
      for (const resource of local.resource) resources.set(resource.id, resource);
      let planCtx: ToolExecutionContext | undefined;
      await withInterrupt(
        (reason) => planCtx?.cancellationToken.cancel(reason),
        () =>
          rt.runPlan(
            {
              ...(local.planId === undefined ? {} : { planId: local.planId }),
              policy: { readOnly: local.readOnly === true, requireCheckpoint: local.requireCheckpoint === true },
              resources: [...resources.values()],
            },
            async (ctx) => {
              planCtx = ctx;
              const json = wantsJson(local);
              try {
                const result = await rt.execute(name, input, ctx, timeoutMs === undefined ? undefined : { timeoutMs });
                if (json) {
                  io.stdout(`${JSON.stringify({ ...result, error: result.ok ? undefined : { name: result.error.name, code: result.error.code, message: result.error.message } }, null, 2)}\n`);
                } else if (result.ok) {
                  io.stdout(`${typeof result.output === 'string' ? result.output : JSON.stringify(result.output, null, 2)}\n`);
                } else {
                  io.stderr(`${result.error.code ?? 'ERROR'}: ${result.error.message}\n`);
                }
                exitCode = result.ok ? EXIT_CODES.ok : EXIT_CODES.failed;
              } catch (error) {
                const { outcome, code, message } = classify(error);
                io.stderr(`${code}: ${message}\n`);
                exitCode =
                  outcome === 'cancelled' ? EXIT_CODES.cancelled : outcome === 'refused' ? EXIT_CODES.refused : outcome === 'not-found' ? EXIT_CODES.notFound : EXIT_CODES.failed;
              }
            },
          ),
      );
    });

  const plan = program.command('plan').description('run, list and cancel plans');
  plan
    .command('run <file>')
    .description('run a plan file (JSON or YAML): policy, bound resources, steps of tool + input')
    .option('--plan-id <id>', 'id of the plan (default: the file\'s id, else a random UUID)')
    .option('--traces <file.jsonl>', 'write the traces as JSON Lines')
    .option('--json', 'machine-readable output')
    .action(async (file: string, local: { planId?: string; traces?: string; json?: boolean }) => {
      if (local.planId !== undefined) checkPlanId(local.planId);
      const planFile = loadPlanFile(file, { cwd: io.cwd, env: io.env });
      const { config, runtime: rt } = await runtime();
      const registry = planRegistry();
      let withdraw: (() => Promise<void>) | undefined;
      let planCtx: ToolExecutionContext | undefined;
      try {
        const report = await withInterrupt(
          (reason) => planCtx?.cancellationToken.cancel(reason),
          () =>
            runPlanFile(rt, planFile, config.resources, io, {
              ...(local.planId === undefined ? {} : { planId: local.planId }),
              ...(local.traces === undefined ? {} : { tracesFile: local.traces }),
              json: wantsJson(local),
              onStart: async (ctx) => {
                planCtx = ctx;
                withdraw = await registry.announce(ctx.planId, planFile.file, (reason) => ctx.cancellationToken.cancel(reason));
              },
            }),
        );
        exitCode = report.exitCode;
      } finally {
        await withdraw?.();
      }
    });

  plan
    .command('cancel <plan-id>')
    .description('cancel a running plan (from another terminal)')
    .action(async (planId: string) => {
      await planRegistry().cancel(planId);
      io.stdout(`Cancellation of plan ${planId} requested.\n`);
    });

  plan
    .command('list')
    .description('show running plans')
    .option('--json', 'machine-readable output')
    .action((local: { json?: boolean }) => {
      const plans = planRegistry().list();
      if (wantsJson(local)) io.stdout(`${JSON.stringify(plans, null, 2)}\n`);
      else if (plans.length === 0) io.stdout('No plan is running.\n');
      else io.stdout(formatTable(['plan', 'pid', 'started', 'file'], plans.map((entry) => [entry.planId, String(entry.pid), entry.startedAt, entry.planFile]), 100));
    });

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    exitCode = report(error, io);
  } finally {
    await built?.dispose();
  }
  return exitCode;
}

function report(error: unknown, io: CliIo): ExitCode {
  if (error instanceof CommanderError) {
    // Commander printed its message already; help and version are not errors.
    return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
  }
  if (CliError.isInstance(error)) {
    io.stderr(`${error.code}: ${error.message}\n`);
    return error.exitCode;
  }
  const { outcome, code, message } = classify(error);
  io.stderr(`${code}: ${message}\n`);
  return outcome === 'not-found' ? EXIT_CODES.notFound : outcome === 'cancelled' ? EXIT_CODES.cancelled : EXIT_CODES.failed;
}

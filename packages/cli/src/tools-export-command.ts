import { MODEL_TOOL_FORMATS, ModelTools, nameRulesOf, type ModelToolFormat } from '@ca/model-tools';
import type { PlanApprovalPolicy, PlanPolicy } from '@ca/tool-context';
import type { DiscoveryResult, ToolRuntime } from '@ca/tool-lifecycle';
import type { Command } from 'commander';
import { CliError } from './cli-error';
import type { CliIo } from './cli-io';
import type { AgentsConfig } from './config';
import { loadPlanFile } from './plan-file';

/** What `agents tools export` needs from `main`. */
export interface ToolsExportContext {
  readonly io: CliIo;
  readonly loadConfiguration: () => AgentsConfig;
  readonly open: (config: AgentsConfig) => Promise<{ runtime: ToolRuntime; discovery: DiscoveryResult }>;
}

interface ExportFlags {
  format?: string;
  planFile?: string;
  readOnly?: boolean;
  requireCheckpoint?: boolean;
  network: boolean;
  markRefused?: boolean;
  strict: boolean;
  names?: boolean;
}

/**
 * `agents tools export --format <format>`: the tools a plan may run, as a
 * model API defines them (OpenAI Responses or Chat Completions, Anthropic,
 * Gemini, MCP), printed as JSON — the policy from `--plan-file` or the flags.
 */
export function addToolsExportCommand(tools: Command, context: ToolsExportContext): void {
  tools
    .command('export')
    .description("print the tools a plan may run as a model API's tool definitions (JSON)")
    .requiredOption('--format <format>', `one of ${MODEL_TOOL_FORMATS.join(', ')}`)
    .option('--plan-file <file>', 'take the policy of this plan file (JSON or YAML) instead of the flags below')
    .option('--read-only', 'a read-only plan: tools that write are left out')
    .option('--require-checkpoint', 'a plan that requires checkpoints: tools that cannot be undone are left out')
    .option('--no-network', 'a plan that denies the network: open-world tools are left out')
    .option('--mark-refused', 'keep the tools the plan refuses, with a note in their description, instead of leaving them out')
    .option('--no-strict', 'OpenAI formats: never strict mode (default: strict where the schema allows)')
    .option('--names', 'print { definitions, names } where names maps each provider name to the tool it stands for')
    .action(async (local: ExportFlags) => {
      const { io } = context;
      const format = local.format as ModelToolFormat;
      if (!MODEL_TOOL_FORMATS.includes(format)) {
        throw new CliError({ code: 'CLI_USAGE', message: `--format ${String(local.format)}: expected one of ${MODEL_TOOL_FORMATS.join(', ')}.` });
      }
      if (local.planFile !== undefined && (local.readOnly === true || local.requireCheckpoint === true || local.network === false)) {
        throw new CliError({
          code: 'CLI_USAGE',
          message: '--plan-file gives the policy: leave out --read-only, --require-checkpoint and --no-network, or the plan file.',
        });
      }
      const config = context.loadConfiguration();
      const policy: PlanPolicy =
        local.planFile === undefined
          ? {
              readOnly: local.readOnly === true,
              requireCheckpoint: local.requireCheckpoint === true,
              network: local.network === false ? 'deny' : 'allow',
              ...approvalOf(config),
            }
          : loadPlanFile(local.planFile, { cwd: io.cwd, env: io.env }).policy;
      const { runtime } = await context.open(config);
      const modelTools = new ModelTools(runtime, { refused: local.markRefused === true ? 'mark' : 'omit', strict: local.strict });
      const definitions = await modelTools.definitions(format, { policy, planId: 'export' });
      if (local.names !== true) {
        io.stdout(`${JSON.stringify(definitions, null, 2)}\n`);
        return;
      }
      const names = Object.fromEntries((await modelTools.tools({ policy }, nameRulesOf(format))).map((tool) => [tool.providerName, tool.name]));
      io.stdout(`${JSON.stringify({ definitions, names }, null, 2)}\n`);
    });
}

function approvalOf(config: AgentsConfig): { approval?: PlanApprovalPolicy } {
  const approval = config.approval?.policy;
  return approval === undefined ? {} : { approval };
}

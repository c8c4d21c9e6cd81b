import path from 'node:path';
import { ToolRuleError, compileToolRules, type ToolRuleDefinition, type ToolRules } from '@ca/tool-lifecycle';
import { CliError } from './cli-error';
import type { AgentsConfig } from './config';
import { expandVariables } from './expand-variables';
import { readDocument } from './read-document';
import { validateDocument } from './validate-document';

/** The rules a command runs with, and where each group came from. */
export interface LoadedRules {
  readonly definitions: readonly ToolRuleDefinition[];
  /** The same, compiled: what `plan check` tests steps against. */
  readonly rules: ToolRules;
}

/**
 * The rules of a command: `approval.rules` of the configuration, then the
 * files of `approval.rulesFiles` and `--rules`, in that order. Each group is
 * checked where it was written, examples included, so a broken rule is
 * reported with its file before anything runs.
 * @throws CliError (CLI_CONFIG_NOT_FOUND, CLI_CONFIG_INVALID) naming the file, the rule and the field.
 */
export function loadRules(
  config: AgentsConfig,
  extraFiles: readonly string[],
  options: { readonly cwd: string; readonly env: Readonly<Record<string, string | undefined>> },
): LoadedRules {
  const definitions: ToolRuleDefinition[] = [];
  const inline = config.approval?.rules ?? [];
  check(inline, `Configuration ${config.file ?? '(none)'}: approval.rules`);
  definitions.push(...inline);
  const files = [...(config.approval?.rulesFiles ?? []), ...extraFiles.map((file) => path.resolve(options.cwd, file))];
  for (const file of files) {
    const raw = readDocument(file, { notFound: 'CLI_CONFIG_NOT_FOUND', invalid: 'CLI_CONFIG_INVALID' }, 'Rules file');
    let expanded: unknown;
    try {
      expanded = expandVariables(raw, options.env);
    } catch (error) {
      throw new CliError({ code: 'CLI_CONFIG_INVALID', message: `Rules file ${file}: ${(error as Error).message}` });
    }
    validateDocument('rules', expanded, file, 'CLI_CONFIG_INVALID');
    const rules = (expanded as { rules: ToolRuleDefinition[] }).rules;
    check(rules, `Rules file ${file}`);
    definitions.push(...rules);
  }
  return { definitions, rules: check(definitions, 'The rules of the configuration and the rules files together') };
}

function check(definitions: readonly ToolRuleDefinition[], where: string): ToolRules {
  try {
    return compileToolRules(definitions);
  } catch (error) {
    if (!ToolRuleError.isInstance(error)) throw error;
    throw new CliError({ code: 'CLI_CONFIG_INVALID', cause: error, message: `${where}: ${error.message}` });
  }
}

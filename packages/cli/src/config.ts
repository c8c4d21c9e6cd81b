import fs from 'node:fs';
import path from 'node:path';
import type { BoundResource, PlanApprovalPolicy } from '@ca/tool-context';
import { resourceFromPath } from '@ca/tool-context';
import type { ToolRuleDefinition, ToolRuntimeOptions } from '@ca/tool-lifecycle';
import { CliError } from './cli-error';
import { expandVariables } from './expand-variables';
import { readDocument } from './read-document';
import { validateDocument } from './validate-document';

/** A resource as configuration and plan files write it. */
export interface ResourceEntry {
  readonly id: string;
  readonly kind?: string;
  readonly path?: string;
  readonly uri?: string;
  readonly access: 'read' | 'write';
  readonly metadata?: Record<string, unknown>;
}

/** A wrapped tool as configuration writes it. */
export interface WrappedEntry {
  readonly name: string;
  readonly tool: string;
  readonly description?: string;
  readonly fixedArguments?: Record<string, unknown>;
  readonly defaultArguments?: Record<string, unknown>;
  readonly timeoutMs?: number;
  readonly retry?: { readonly attempts: number; readonly backoffMs?: number };
  readonly capability?: Record<string, boolean>;
}

/** The `approval` block of a configuration. */
export interface ApprovalConfig {
  /** Which calls need approval in `tools run`, and in plan files without a `policy.approval` of their own. */
  readonly policy?: PlanApprovalPolicy;
  /** Rules written in the configuration. */
  readonly rules?: readonly ToolRuleDefinition[];
  /** Files of rules (absolute once loaded). */
  readonly rulesFiles?: readonly string[];
  /** How long a call waits for an approval, in ms. */
  readonly timeoutMs?: number;
}

/** `agents.config.json` as written (after `${VAR}` expansion). */
export interface AgentsConfigFile {
  readonly runtime?: ToolRuntimeOptions;
  readonly approval?: ApprovalConfig;
  readonly resources?: readonly ResourceEntry[];
  readonly builtin?: boolean | Record<string, unknown>;
  readonly custom?: { readonly modules: readonly string[] };
  readonly mcpServers?: Record<string, Record<string, unknown>>;
  readonly skills?: Record<string, unknown> & { readonly roots?: readonly string[] };
  readonly wrapped?: readonly WrappedEntry[];
}

/** A configuration ready to build a runtime from: paths absolute, resources bound. */
export interface AgentsConfig extends AgentsConfigFile {
  /** The file it came from; undefined for the built-in default. */
  readonly file: string | undefined;
  /** Folder relative paths are resolved against. */
  readonly baseDir: string;
  readonly resources: readonly BoundResource[];
}

/** Configuration file names looked for, in order, when `--config` is not given. */
export const CONFIG_FILE_NAMES = Object.freeze(['agents.config.json', 'agents.config.yaml', 'agents.config.yml']);

/**
 * Finds, reads, expands and validates the configuration.
 * @throws CliError (CLI_CONFIG_NOT_FOUND, CLI_CONFIG_INVALID) naming the file and the offending keys.
 */
export function loadConfig(options: {
  readonly file?: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}): AgentsConfig {
  const file =
    options.file === undefined
      ? CONFIG_FILE_NAMES.map((name) => path.join(options.cwd, name)).find((candidate) => fs.existsSync(candidate))
      : path.resolve(options.cwd, options.file);
  if (file === undefined) {
    // No configuration: the built-in tools only, with no resource bound.
    return { file: undefined, baseDir: options.cwd, resources: [], builtin: true };
  }
  const raw = readDocument(file, { notFound: 'CLI_CONFIG_NOT_FOUND', invalid: 'CLI_CONFIG_INVALID' }, 'Configuration');
  let expanded: unknown;
  try {
    expanded = expandVariables(raw, options.env);
  } catch (error) {
    throw new CliError({ code: 'CLI_CONFIG_INVALID', message: `Configuration ${file}: ${(error as Error).message}` });
  }
  validateDocument('config', expanded, file, 'CLI_CONFIG_INVALID');
  const config = expanded as AgentsConfigFile;
  const baseDir = path.dirname(file);
  return {
    ...config,
    file,
    baseDir,
    resources: bindResources(config.resources ?? [], baseDir, file),
    ...(config.custom === undefined ? {} : { custom: { modules: config.custom.modules.map((module) => resolveModule(module, baseDir)) } }),
    ...(config.approval?.rulesFiles === undefined
      ? {}
      : { approval: { ...config.approval, rulesFiles: config.approval.rulesFiles.map((rules) => path.resolve(baseDir, rules)) } }),
    ...(config.skills === undefined
      ? {}
      : { skills: { ...config.skills, ...(config.skills.roots === undefined ? {} : { roots: config.skills.roots.map((root) => path.resolve(baseDir, root)) }) } }),
  };
}

/**
 * Turns resource entries into bound resources; relative paths are resolved
 * against `baseDir`.
 * @throws CliError for a duplicate id or an invalid URI.
 */
export function bindResources(entries: readonly ResourceEntry[], baseDir: string, file: string): BoundResource[] {
  const seen = new Set<string>();
  return entries.map((entry, index) => {
    if (seen.has(entry.id)) {
      throw new CliError({ code: 'CLI_CONFIG_INVALID', message: `${file}: /resources/${index}/id '${entry.id}' is used twice; resource ids must be unique.` });
    }
    seen.add(entry.id);
    if (entry.path !== undefined) {
      const resource = resourceFromPath({ id: entry.id, path: path.resolve(baseDir, entry.path), access: entry.access, ...(entry.kind === undefined ? {} : { kind: entry.kind }) });
      return entry.metadata === undefined ? resource : { ...resource, metadata: entry.metadata };
    }
    return {
      id: entry.id,
      kind: entry.kind ?? 'uri',
      uri: entry.uri as string,
      access: entry.access,
      ...(entry.metadata === undefined ? {} : { metadata: entry.metadata }),
    };
  });
}

function resolveModule(module: string, baseDir: string): string {
  return module.startsWith('.') || path.isAbsolute(module) ? path.resolve(baseDir, module) : module;
}

import fs from 'node:fs';
import path from 'node:path';
import type { BoundResource, PlanApprovalPolicy } from '@ca/tool-context';
import { resourceFromPath } from '@ca/tool-context';
import type { ToolRuleDefinition, ToolRuntimeOptions } from '@ca/tool-lifecycle';
import type { SandboxSetting } from '@ca/sandbox';
import { CliError } from './cli-error';
import type { CommandHookEntry } from './command-hook';
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
  /** `false`: `plan run` takes no answers through the plan registry (`agents plan approve|deny`); default true. */
  readonly answersFromRegistry?: boolean;
}

/** The `registry` key: `local`, a Redis URL, or a Redis registry's settings. */
export type RegistrySetting =
  | string
  | {
      readonly url: string;
      readonly keyPrefix?: string;
      readonly ttlMs?: number;
      readonly heartbeatIntervalMs?: number;
      readonly pendingTtlMs?: number;
      readonly connectTimeoutMs?: number;
      readonly commandTimeoutMs?: number;
      readonly tls?: { readonly caFile?: string; readonly servername?: string };
    };

/** A profile of `agents mcp serve` as configuration writes it: what a client session gets. */
export interface ServeProfileEntry {
  readonly description?: string;
  readonly policy?: {
    readonly readOnly?: boolean;
    readonly requireCheckpoint?: boolean;
    readonly network?: 'allow' | 'deny';
    readonly approval?: PlanApprovalPolicy;
  };
  /** Bound besides the configuration's resources (the same id replaces it); relative paths against the configuration's folder. */
  readonly resources?: readonly ResourceEntry[];
  readonly tools?: readonly string[];
  readonly mode?: 'all' | 'search';
  readonly pin?: readonly string[];
  readonly approve?: readonly string[];
  readonly timeoutMs?: number;
}

/** The `serve` block: `agents mcp serve`. */
export interface ServeConfig {
  readonly profile?: string;
  readonly profiles?: Readonly<Record<string, ServeProfileEntry>>;
  readonly maxConcurrentCalls?: number;
  readonly maxCallsPerSession?: number;
  readonly maxResultCharacters?: number;
  readonly http?: {
    readonly host?: string;
    readonly port?: number;
    readonly path?: string;
    readonly publicUrl?: string;
    readonly allowedHosts?: readonly string[];
    readonly allowedOrigins?: readonly string[];
    readonly maxSessions?: number;
    readonly maxSessionsPerClient?: number;
    readonly requestsPerMinute?: number;
    readonly clientHeader?: string;
    readonly fleet?: { readonly key?: string; readonly replicaId?: string };
    readonly sessionIdleTimeoutMs?: number;
    readonly maxRequestBytes?: number;
    readonly oauth?: {
      readonly issuer: string;
      readonly audience: string | readonly string[];
      readonly requiredScopes?: readonly string[];
      readonly introspection?: { readonly clientId: string; readonly clientSecret: string; readonly endpoint?: string };
      readonly resourceName?: string;
    };
  };
}

/** `agents.config.json` as written (after `${VAR}` expansion). */
export interface AgentsConfigFile {
  readonly runtime?: ToolRuntimeOptions;
  readonly approval?: ApprovalConfig;
  /** The kernel sandbox of commands and skill scripts (see `@ca/sandbox`). */
  readonly sandbox?: SandboxSetting;
  readonly registry?: RegistrySetting;
  readonly resources?: readonly ResourceEntry[];
  readonly builtin?: boolean | Record<string, unknown>;
  readonly custom?: { readonly modules: readonly string[] };
  readonly mcpServers?: Record<string, Record<string, unknown>>;
  readonly skills?: Record<string, unknown> & { readonly roots?: readonly string[] };
  readonly wrapped?: readonly WrappedEntry[];
  /** Programs run before, after or on the failure of tool calls (see `CommandHookEntry`). */
  readonly hooks?: readonly CommandHookEntry[];
  /** Output guardrails: secrets redacted (on by default), instructions aimed at the model noted or withheld (off by default). */
  readonly guardrails?: GuardrailsConfig;
  /** The lockfile of pinned tool definitions, relative to this file (default `agents.lock.json` beside it). */
  readonly lockfile?: string;
  readonly serve?: ServeConfig;
  /** Durable plans on Restate (`agents worker`, `agents plan run --durable`); see `durable-config.ts`. */
  readonly durable?: DurableConfig;
}

/** The `durable` key: where Restate is, and the key that encrypts what hosts write to it. */
export interface DurableConfig {
  readonly ingressUrl: string;
  readonly adminUrl: string;
  /** The workflow's name in Restate (default `plans`): the same for workers and clients. */
  readonly workflow?: string;
  /** 32 bytes or more, the same on every host: what hosts write to Restate is encrypted with it. */
  readonly journalKey?: string;
  /** Every `agents plan run` goes through Restate. */
  readonly always?: boolean;
}

/** The `guardrails` key. */
export interface GuardrailsConfig {
  /**
   * `false` turns the secret redaction off; an object adds rules (gitleaks' shape, RE2 syntax) and an allowlist,
   * or turns off gitleaks' rules (`gitleaks: false`) or the shapes traces hide (`shapes: false`: URL credentials,
   * Authorization values, secret-named parameters and keys). Default on.
   */
  readonly secrets?:
    | boolean
    | {
        readonly gitleaks?: boolean;
        readonly shapes?: boolean;
        readonly rules?: readonly { readonly id: string; readonly regex: string; readonly keywords?: readonly string[] }[];
        readonly allowlist?: { readonly regexes?: readonly string[]; readonly stopwords?: readonly string[] };
      };
  /** The heuristic check for instructions aimed at the model in tool outputs: `'note'`, `'withhold'`, or `false` (default). */
  readonly instructions?: false | 'note' | 'withhold';
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
  const file = findConfigFile(options);
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
    ...(config.mcpServers === undefined ? {} : { mcpServers: resolveSandboxPaths(config.mcpServers, baseDir) }),
    ...(config.skills === undefined
      ? {}
      : {
          skills: { ...config.skills, ...(config.skills.roots === undefined ? {} : { roots: config.skills.roots.map((root) => path.resolve(baseDir, root)) }) },
        }),
  };
}

/** The configuration file: the one given, else the first of {@link CONFIG_FILE_NAMES} in `cwd`. */
export function findConfigFile(options: { readonly file?: string; readonly cwd: string }): string | undefined {
  return options.file === undefined
    ? CONFIG_FILE_NAMES.map((name) => path.join(options.cwd, name)).find((candidate) => fs.existsSync(candidate))
    : path.resolve(options.cwd, options.file);
}

/**
 * Only the `registry` key of the configuration, for the commands that run no
 * tool (`plan list`, `plan cancel`): the other keys are neither expanded nor
 * checked, so an operator's shell need not set the variables the tools' keys use.
 * @throws CliError (CLI_CONFIG_NOT_FOUND, CLI_CONFIG_INVALID) for the file or its `registry` key.
 */
export function loadRegistryConfig(options: {
  readonly file?: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}): AgentsConfig {
  const file = findConfigFile(options);
  if (file === undefined) return { file: undefined, baseDir: options.cwd, resources: [] };
  const raw = readDocument(file, { notFound: 'CLI_CONFIG_NOT_FOUND', invalid: 'CLI_CONFIG_INVALID' }, 'Configuration');
  const registry = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>)['registry'] : undefined;
  if (registry === undefined) return { file, baseDir: path.dirname(file), resources: [] };
  let expanded: unknown;
  try {
    expanded = expandVariables(registry, options.env, '/registry');
  } catch (error) {
    throw new CliError({ code: 'CLI_CONFIG_INVALID', message: `Configuration ${file}: ${(error as Error).message}` });
  }
  validateDocument('config', { registry: expanded }, file, 'CLI_CONFIG_INVALID');
  return { file, baseDir: path.dirname(file), resources: [], registry: expanded as RegistrySetting };
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
      const resource = resourceFromPath({
        id: entry.id,
        path: path.resolve(baseDir, entry.path),
        access: entry.access,
        ...(entry.kind === undefined ? {} : { kind: entry.kind }),
      });
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

/** Relative paths of an MCP server's sandbox (`writable`, `readable`) are resolved against `baseDir`, like every path of the file. */
function resolveSandboxPaths(servers: Record<string, Record<string, unknown>>, baseDir: string): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.entries(servers).map(([name, server]) => {
      const sandbox = server['sandbox'];
      if (typeof sandbox !== 'object' || sandbox === null) return [name, server];
      const resolved: Record<string, unknown> = { ...sandbox };
      for (const key of ['writable', 'readable']) {
        const paths = resolved[key];
        if (Array.isArray(paths)) resolved[key] = paths.map((entry: unknown) => (typeof entry === 'string' ? path.resolve(baseDir, entry) : entry));
      }
      return [name, { ...server, sandbox: resolved }];
    }),
  );
}

function resolveModule(module: string, baseDir: string): string {
  return module.startsWith('.') || path.isAbsolute(module) ? path.resolve(baseDir, module) : module;
}

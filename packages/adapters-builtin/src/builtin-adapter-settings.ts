import { tmpdir } from 'node:os';
import { isAbsolute } from 'node:path';
import { MINIMAL_ENVIRONMENT_VARIABLES, createSandbox, SandboxSettingsError, type Sandbox, type SandboxSetting } from '@ca/sandbox';
import { createConsoleLogger, type RuntimeLogger } from '@ca/tool-lifecycle';
import { fetch as undiciFetch } from 'undici';
import { BuiltinToolError } from './builtin-tool-error';
import { parseAddressList, systemResolver, type HostResolver, type NetworkAddressPolicy } from './network-guard';

/** Every built-in tool, by name. */
export const BUILTIN_TOOL_NAMES = Object.freeze([
  'builtin.fs.read',
  'builtin.fs.write',
  'builtin.fs.edit',
  'builtin.fs.delete',
  'builtin.fs.list',
  'builtin.fs.glob',
  'builtin.fs.grep',
  'builtin.command.run',
  'builtin.http.get',
  'builtin.http.request',
] as const);

/** The name of one built-in tool. */
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/** Limits of the file tools; every field has a default (see the README). */
export interface BuiltinFileLimits {
  /** Most bytes one `builtin.fs.read` returns (default 262,144 = 256 KiB). */
  readonly readMaxBytes?: number;
  /** Most lines one `builtin.fs.read` returns, and its default `limit` in lines (default 2,000). */
  readonly readMaxLines?: number;
  /** Largest file `builtin.fs.edit` will load to replace text in (default 10 MiB). */
  readonly editMaxBytes?: number;
  /** Most entries one `builtin.fs.list` page holds (default 1,000). */
  readonly listMaxEntries?: number;
  /** Most paths one `builtin.fs.glob` page holds (default 1,000). */
  readonly globMaxResults?: number;
  /** Most matches one `builtin.fs.grep` returns (default 500). */
  readonly grepMaxMatches?: number;
  /** Longest matched line `builtin.fs.grep` returns, in characters; longer lines are cut (default 500). */
  readonly grepMaxLineLength?: number;
  /** Most directory entries a glob or grep walk visits before it stops with `truncated` (default 1,000,000). */
  readonly walkMaxEntries?: number;
  /**
   * Let write and edit replace a file that has more than one (hard) link
   * (default `false`: refused with `BUILTIN_HARD_LINKED_FILE`, because the
   * other names may lie outside the bound resources). When allowed, the new
   * content goes to a new file under this name; the other names keep the old
   * content, so nothing outside the resources changes either way.
   */
  readonly allowHardLinkedWrites?: boolean;
}

/** Settings of `builtin.command.run`. */
export interface BuiltinCommandSettings {
  /**
   * Commands that may run, matched against `argv[0]`: a bare name (`git`)
   * matches that name or any path ending in `/git`; an absolute path matches
   * only itself. Absent (the default): every command may run.
   */
  readonly allow?: readonly string[];
  /** Variables of the server's environment passed on (default the runner's `MINIMAL_ENVIRONMENT_VARIABLES`: HOME, LANG, LC_ALL, LC_CTYPE, LOGNAME, PATH, TERM, TMPDIR, TZ, USER). */
  readonly inheritEnv?: readonly string[];
  /** Fixed variables set for every command (after the inherited ones, before the call's `env`). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Variables a call's `env` may set although they change which code a
   * program loads or runs (`LD_PRELOAD`, `PATH`, `NODE_OPTIONS`, `PYTHONPATH`,
   * `GIT_*`, … — see the README), by exact name, case-insensitive. Default
   * none: a call that sets one is refused with `BUILTIN_COMMAND_ENV_NOT_ALLOWED`.
   */
  readonly allowEnv?: readonly string[];
  /** Deadline of a command whose call sets none, in ms (default 120,000). */
  readonly defaultTimeoutMs?: number;
  /** Longest deadline a call may ask for, in ms (default 600,000). */
  readonly maxTimeoutMs?: number;
  /** How long a process group gets between SIGTERM and SIGKILL, in ms (default 2,000). */
  readonly killGraceMs?: number;
  /** Most bytes kept of stdout and of stderr each (default 1 MiB); the rest is counted and dropped. */
  readonly maxOutputBytes?: number;
  /**
   * The kernel sandbox of `@ca/sandbox` (bubblewrap, Linux):
   * `'required'`, `'auto'` (the default: used where it works) or `'off'`, or
   * `{ mode, network?, bwrapPath? }`. Under the sandbox a command writes only
   * the plan's write-bound resources (nothing in a read-only plan; through an
   * undoable overlay in a checkpoint plan), sees a private `/tmp`, has no
   * network when the plan denies it (or `network: false`), and everything it
   * started ends with it. See the README.
   */
  readonly sandbox?: SandboxSetting;
}

/** Settings of `builtin.http.get` and `builtin.http.request`. */
export interface BuiltinHttpSettings {
  /**
   * Hosts that may be requested: `example.com` (that host, any port),
   * `example.com:8080` (that host and port) or `*.example.com` (any subdomain,
   * not the domain itself). Absent (the default): every host. A name listed
   * here still has to resolve to an address the tools may reach (below).
   */
  readonly allowHosts?: readonly string[];
  /**
   * Reach loopback, private (RFC 1918, `fc00::/7`, shared `100.64.0.0/10`),
   * link-local (`169.254.0.0/16`, `fe80::/10`), unspecified, multicast and
   * reserved addresses (default `false`: refused with
   * `BUILTIN_HTTP_ADDRESS_NOT_ALLOWED`). Cloud metadata services stay refused;
   * list one in `allowAddresses` to reach it.
   */
  readonly allowPrivateNetworks?: boolean;
  /**
   * Addresses and ranges that may be reached although they are not public:
   * `127.0.0.1`, `10.1.0.0/16`, `::1`, `fd12:3456::/32`. Also opens a
   * metadata address (`169.254.169.254`) when listed exactly, by address.
   */
  readonly allowAddresses?: readonly string[];
  /** Deadline of a request whose call sets none, in ms (default 30,000). */
  readonly defaultTimeoutMs?: number;
  /** Longest deadline a call may ask for, in ms (default 300,000). */
  readonly maxTimeoutMs?: number;
  /** Most response-body bytes read; reading stops there and `truncated` is set (default 1 MiB). */
  readonly maxResponseBytes?: number;
  /** Most redirects followed, each checked against `allowHosts` and the address rules (default 5). */
  readonly maxRedirects?: number;
  /**
   * The `fetch` to use; default undici's. It is called with a `dispatcher`
   * in its options — an undici `Agent` whose connections go only to the
   * checked addresses; a `fetch` that ignores it (not Node's or undici's) loses
   * the check of resolved names and keeps only that of literal addresses.
   */
  readonly fetch?: typeof fetch;
  /**
   * Resolves a host name to all its addresses, once per connection; default
   * the system resolver (`dns.lookup` with `all: true`). For tests and for
   * services with their own resolver.
   */
  readonly lookup?: HostResolver;
}

/** Where undo data of the write tools lives. */
export interface BuiltinUndoSettings {
  /** Parent of the per-plan backup folders (default `os.tmpdir()`). */
  readonly directory?: string;
  /** Previous contents up to this size are kept inline in the change, base64 (default 65,536 bytes); larger ones are copied to the plan's backup folder. */
  readonly inlineMaxBytes?: number;
}

/** Settings of `createBuiltinAdapter`; everything is optional. */
export interface BuiltinAdapterSettings {
  /** Id of the source in messages (default `'builtin'`). */
  readonly id?: string;
  /** The tools to offer (default all of {@link BUILTIN_TOOL_NAMES}). */
  readonly tools?: readonly BuiltinToolName[];
  /** Limits of the file tools. */
  readonly files?: BuiltinFileLimits;
  /** Settings of the command tool. */
  readonly command?: BuiltinCommandSettings;
  /** Settings of the HTTP tools. */
  readonly http?: BuiltinHttpSettings;
  /** Where undo data lives. */
  readonly undo?: BuiltinUndoSettings;
  /**
   * Where the adapter's warnings go (the command sandbox falling back to none,
   * once per process). Default: the container's `RUNTIME_LOGGER` with
   * `registerBuiltinAdapter`, else a console logger.
   */
  readonly logger?: RuntimeLogger;
}

/** Settings with every default filled in. */
export interface ResolvedSettings {
  readonly id: string;
  readonly tools: readonly BuiltinToolName[];
  readonly files: Required<BuiltinFileLimits>;
  readonly command: Required<Omit<BuiltinCommandSettings, 'allow' | 'sandbox'>> & { readonly allow: readonly string[] | undefined; readonly sandbox: Sandbox };
  readonly http: Required<Omit<BuiltinHttpSettings, 'allowHosts' | 'fetch' | 'lookup' | 'allowPrivateNetworks' | 'allowAddresses'>> & {
    readonly allowHosts: readonly string[] | undefined;
    readonly fetch: typeof fetch;
    readonly lookup: HostResolver;
    /** `allowPrivateNetworks` and `allowAddresses`, ready to check addresses against. */
    readonly addresses: NetworkAddressPolicy;
  };
  readonly undo: Required<BuiltinUndoSettings>;
}

/** Checks settings and fills in the defaults. */
export function resolveSettings(settings: BuiltinAdapterSettings = {}): ResolvedSettings {
  const fail = (field: string, message: string): never => {
    throw new BuiltinToolError({
      code: 'BUILTIN_INVALID_SETTINGS',
      message: `Invalid built-in adapter setting ${field}: ${message}`,
    });
  };
  if (typeof settings !== 'object' || settings === null) fail('settings', 'expected an object (or nothing).');
  if (settings.logger !== undefined && typeof settings.logger?.warn !== 'function') fail('logger', 'expected a RuntimeLogger (debug, info, warn, error).');
  const count = (group: string, value: unknown, name: string, fallback: number, minimum = 1): number => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < minimum) {
      fail(`${group}.${name}`, `expected an integer ≥ ${minimum}, got ${String(value)}.`);
    }
    return value as number;
  };
  const names = (field: string, value: unknown): readonly string[] | undefined => {
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && item.length > 0)) {
      fail(field, 'expected an array of non-empty strings.');
    }
    return Object.freeze([...(value as string[])]);
  };
  const flag = (field: string, value: unknown): boolean => {
    if (value !== undefined && typeof value !== 'boolean') fail(field, `expected true or false, got ${String(value)}.`);
    return value === true;
  };
  const tools = (names('tools', settings.tools) ?? BUILTIN_TOOL_NAMES) as readonly BuiltinToolName[];
  for (const tool of tools) {
    if (!(BUILTIN_TOOL_NAMES as readonly string[]).includes(tool)) {
      fail('tools', `unknown tool "${tool}"; choose from ${BUILTIN_TOOL_NAMES.join(', ')}.`);
    }
  }
  const id = settings.id ?? 'builtin';
  if (typeof id !== 'string' || id.length === 0) fail('id', 'expected a non-empty string.');
  const files = settings.files ?? {};
  const command = settings.command ?? {};
  const http = settings.http ?? {};
  const undo = settings.undo ?? {};
  const env = command.env ?? {};
  if (
    typeof env !== 'object' ||
    env === null ||
    !Object.entries(env).every(([name, value]) => /^[^=\0]+$/.test(name) && typeof value === 'string' && !value.includes('\0'))
  ) {
    fail('command.env', 'expected an object of string values without NUL characters, whose names hold no "=".');
  }
  const fetchFunction = http.fetch ?? (undiciFetch as unknown as typeof fetch);
  if (typeof fetchFunction !== 'function') fail('http.fetch', 'expected a fetch function.');
  const lookup = http.lookup ?? systemResolver;
  if (typeof lookup !== 'function') fail('http.lookup', 'expected a function (hostname) => Promise<{ address, family }[]>.');
  const allowPrivateNetworks = http.allowPrivateNetworks ?? false;
  if (typeof allowPrivateNetworks !== 'boolean') fail('http.allowPrivateNetworks', `expected true or false, got ${String(allowPrivateNetworks)}.`);
  const allowAddresses = names('http.allowAddresses', http.allowAddresses);
  const addressList = allowAddresses === undefined ? undefined : parseAddressList(allowAddresses);
  if (addressList !== undefined && addressList.invalid.length > 0) {
    fail(
      'http.allowAddresses',
      `cannot read ${addressList.invalid.map((entry) => `"${entry}"`).join(', ')}; give IP addresses or CIDR ranges such as "10.0.0.0/8" or "::1".`,
    );
  }
  const undoDirectory = undo.directory ?? tmpdir();
  if (typeof undoDirectory !== 'string' || !isAbsolute(undoDirectory)) fail('undo.directory', 'expected an absolute path.');
  return Object.freeze({
    id,
    tools,
    files: Object.freeze({
      readMaxBytes: count('files', files.readMaxBytes, 'readMaxBytes', 256 * 1024),
      readMaxLines: count('files', files.readMaxLines, 'readMaxLines', 2000),
      editMaxBytes: count('files', files.editMaxBytes, 'editMaxBytes', 10 * 1024 * 1024),
      listMaxEntries: count('files', files.listMaxEntries, 'listMaxEntries', 1000),
      globMaxResults: count('files', files.globMaxResults, 'globMaxResults', 1000),
      grepMaxMatches: count('files', files.grepMaxMatches, 'grepMaxMatches', 500),
      grepMaxLineLength: count('files', files.grepMaxLineLength, 'grepMaxLineLength', 500),
      walkMaxEntries: count('files', files.walkMaxEntries, 'walkMaxEntries', 1_000_000),
      allowHardLinkedWrites: flag('files.allowHardLinkedWrites', files.allowHardLinkedWrites),
    }),
    command: Object.freeze({
      allow: names('command.allow', command.allow),
      inheritEnv: names('command.inheritEnv', command.inheritEnv) ?? MINIMAL_ENVIRONMENT_VARIABLES,
      env: Object.freeze({ ...env }),
      allowEnv: names('command.allowEnv', command.allowEnv) ?? Object.freeze([]),
      defaultTimeoutMs: count('command', command.defaultTimeoutMs, 'defaultTimeoutMs', 120_000),
      maxTimeoutMs: count('command', command.maxTimeoutMs, 'maxTimeoutMs', 600_000),
      killGraceMs: count('command', command.killGraceMs, 'killGraceMs', 2000, 0),
      sandbox: sandboxOf(command.sandbox, fail, settings.logger),
      maxOutputBytes: count('command', command.maxOutputBytes, 'maxOutputBytes', 1024 * 1024),
    }),
    http: Object.freeze({
      allowHosts: names('http.allowHosts', http.allowHosts)?.map((host) => host.toLowerCase()),
      defaultTimeoutMs: count('http', http.defaultTimeoutMs, 'defaultTimeoutMs', 30_000),
      maxTimeoutMs: count('http', http.maxTimeoutMs, 'maxTimeoutMs', 300_000),
      maxResponseBytes: count('http', http.maxResponseBytes, 'maxResponseBytes', 1024 * 1024),
      maxRedirects: count('http', http.maxRedirects, 'maxRedirects', 5, 0),
      fetch: fetchFunction,
      lookup,
      addresses: Object.freeze({ allowPrivateNetworks, allowAddresses: addressList?.list }),
    }),
    undo: Object.freeze({
      directory: undoDirectory,
      inlineMaxBytes: count('undo', undo.inlineMaxBytes, 'inlineMaxBytes', 64 * 1024, 0),
    }),
  });
}

/** The command tool's sandbox; a setting of the wrong shape is a settings error of this adapter. */
function sandboxOf(setting: SandboxSetting | undefined, fail: (field: string, message: string) => never, logger: RuntimeLogger | undefined): Sandbox {
  const log = logger ?? createConsoleLogger();
  try {
    return createSandbox(setting, { setting: 'command.sandbox', warn: (message) => log.warn(message, { code: 'SANDBOX_OFF', setting: 'command.sandbox' }) });
  } catch (error) {
    if (!SandboxSettingsError.isInstance(error)) throw error;
    return fail(error.setting, error.message.replace(/^The sandbox setting \S+ /, ''));
  }
}

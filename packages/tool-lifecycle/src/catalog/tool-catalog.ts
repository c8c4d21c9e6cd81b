import { describeValue, isToolSourceKind, isValidToolName, messageOf, normalizeCapability } from '@ca/domain';
import { CompiledSchema, SchemaCompileError, SchemaValidator, isSchemaTrust, type SchemaTrust } from '@ca/schema';
import { ToolDefinitionChangedError, ToolInvalidArgumentError, ToolNotFoundError, ToolRegistrationError, type DuplicateToolName } from '../errors';
import type { RuntimeLogger } from '../observability';
import { pinScopeOf, type DefinitionLock, type PinnedDefinition, type PinVerdict } from '../pins';
import { closestNames, type ToolDescriptor, type ToolInstance, type ToolSource, type UnavailableTool } from '../tool';

/** A source that could not be listed, and why. */
export interface SourceError {
  readonly sourceId: string;
  readonly error: Error & { readonly code?: string };
}

/** What `discover` found across every source. */
export interface DiscoveryResult {
  /** Usable tools, sorted by name. */
  readonly tools: readonly ToolDescriptor[];
  /** Tools a source listed but that cannot be offered, with the reason. */
  readonly unavailable: readonly UnavailableTool[];
  /** Sources that could not be listed at all (they failed or missed the deadline); their tools are missing. */
  readonly sourceErrors: readonly SourceError[];
}

/** A tool the catalog offers: its descriptor, compiled schemas and, once asked for, its instance. */
export interface RegisteredTool {
  readonly descriptor: ToolDescriptor;
  readonly source: ToolSource;
  readonly input: CompiledSchema | undefined;
  readonly output: CompiledSchema | undefined;
  readonly strictOutput: boolean;
  readonly timeoutMs: number | undefined;
  instance: ToolInstance | undefined;
  instancePromise: Promise<ToolInstance> | undefined;
  /** Whether a rule of the runtime names this tool, once the runtime has asked (its rules never change). */
  ruled: boolean | undefined;
  /** What `hooks/` keeps for this tool's calls (the runtime's hooks that match it), once it has asked; opaque here. */
  hooks: object | undefined;
  /** Its pin, while the tool is pinned and not yet confirmed with its source (`pins/`): checked before its first call. */
  pinToConfirm: { readonly pin: PinnedDefinition; readonly scope: string } | undefined;
  /** The confirmation in flight, shared by concurrent first calls. */
  confirming: Promise<void> | undefined;
}

/** Settings of a {@link ToolCatalog}. */
export interface ToolCatalogSettings {
  readonly sources: readonly ToolSource[];
  readonly validator: SchemaValidator;
  readonly logger: RuntimeLogger;
  /** Fail every tool's results whose output does not match its schema. */
  readonly strictOutput: boolean;
  /** Deadline of an execution whose descriptor sets none. */
  readonly defaultTimeoutMs: number | undefined;
  /** How long one source's `discover` may take before it is reported in `sourceErrors`. */
  readonly discoverTimeoutMs: number;
  /**
   * Checks each valid tool of a source as discovered (the pinned definitions of
   * `pins/`): a tool it quarantines is unavailable with that entry; one that
   * matches its pin is confirmed with its source before its first call.
   */
  readonly quarantine?: ((source: ToolSource, descriptor: ToolDescriptor) => PinVerdict | undefined) | undefined;
}

interface Snapshot {
  readonly tools: Map<string, RegisteredTool>;
  readonly unavailable: Map<string, UnavailableTool>;
  /**
   * What every source reports unavailable, sources that could not be listed
   * included: an entry may stand for a group of tools (`mcp.<server>`, a
   * server that could not be listed), which explains a missing name under it.
   */
  readonly unavailableGroups: readonly UnavailableTool[];
  readonly result: DiscoveryResult;
  /** Each listed pin scope's valid tools as offered, quarantined ones included: what a lock pins. */
  readonly definitions: Map<string, ToolDescriptor[]>;
  /** What the lock cannot see now: the sources that could not be listed, and the unavailable entries of the others, with their source. */
  readonly unlisted: { readonly failed: readonly ToolSource[]; readonly unavailable: readonly { readonly source: ToolSource; readonly name: string }[] };
}

/**
 * The tools of every source, discovered once and kept until a source reports
 * a change: descriptors checked and frozen, schemas compiled once, names
 * unique across sources, instances fetched from their source on first use.
 */
export class ToolCatalog {
  private readonly sources: readonly ToolSource[];
  private readonly settings: ToolCatalogSettings;
  private snapshot: Snapshot | undefined;
  private loading: Promise<Snapshot> | undefined;
  private readonly unsubscribers: (() => void)[] = [];
  private readonly changeListeners = new Set<() => void>();

  constructor(settings: ToolCatalogSettings) {
    settings.sources.forEach((source, index) => {
      if (typeof source?.discover !== 'function' || typeof source.get !== 'function') {
        throw new ToolInvalidArgumentError({
          argument: `sources[${index}]`,
          expected: 'a ToolSource with discover() and get() methods',
          received: source,
          advice: 'Register a ToolSource (e.g. from an @ca/adapters-* package).',
        });
      }
      if (source.schemaTrust !== undefined && !isSchemaTrust(source.schemaTrust)) {
        throw new ToolInvalidArgumentError({
          argument: `sources[${index}].schemaTrust`,
          expected: "'trusted' or 'untrusted' (or nothing, which means untrusted)",
          received: source.schemaTrust,
          advice: "Declare 'trusted' only for a source whose schemas are all the service's own.",
        });
      }
    });
    this.sources = [...settings.sources];
    this.settings = settings;
  }

  /** The tool when the catalog is loaded and offers it; the synchronous fast path of `execute`. */
  loaded(name: string): RegisteredTool | undefined {
    return this.snapshot?.tools.get(name);
  }

  /** Discovers (or returns what was discovered) across every source. */
  async discover(options: { readonly signal?: AbortSignal; readonly refresh?: boolean } = {}): Promise<DiscoveryResult> {
    if (options.refresh === true) this.snapshot = undefined;
    return (await this.load(options.signal)).result;
  }

  /**
   * Each listed pin scope's valid tools as offered now (quarantined ones
   * included), and the pin scopes of `previous` that the lock cannot see now
   * (a source that could not be listed, a server that did not start): those keep their pins.
   */
  async definitions(
    previous: DefinitionLock | undefined,
  ): Promise<{ readonly byScope: ReadonlyMap<string, readonly ToolDescriptor[]>; readonly unseenScopes: readonly string[] }> {
    const snapshot = await this.load();
    const { failed, unavailable } = snapshot.unlisted;
    const unseenScopes = Object.entries(previous?.scopes ?? {})
      .filter(
        ([scope, tools]) =>
          !snapshot.definitions.has(scope) &&
          (failed.some((source) => source.id === scope || Object.keys(tools).some((name) => pinScopeOf(source, name) === scope)) ||
            unavailable.some(({ source, name }) => pinScopeOf(source, name) === scope)),
      )
      .map(([scope]) => scope);
    return { byScope: snapshot.definitions, unseenScopes };
  }

  /**
   * The registered tool of this name.
   * @throws ToolInvalidArgumentError for a name that is not a non-empty string.
   * @throws ToolRegistrationError when the tool is listed but unavailable.
   * @throws ToolNotFoundError when no source offers it.
   */
  async lookup(name: string, planId: string | undefined): Promise<RegisteredTool> {
    if (typeof name !== 'string' || name.length === 0) {
      throw new ToolInvalidArgumentError({ argument: 'name', expected: 'a non-empty tool name', received: name, ...(planId === undefined ? {} : { planId }) });
    }
    const snapshot = await this.load();
    const entry = snapshot.tools.get(name);
    if (entry !== undefined) return entry;
    // Not a typo either when its group is unavailable (an MCP server that could not be listed): say why, with the group's error.
    const unavailable = snapshot.unavailable.get(name) ?? groupOf(snapshot.unavailableGroups, name);
    // A quarantined tool: the pins' own error, in this plan (the code a caller tells it by, with the diff).
    if (unavailable !== undefined && ToolDefinitionChangedError.isInstance(unavailable.error)) {
      throw planId === undefined ? unavailable.error : unavailable.error.inPlan(planId);
    }
    if (unavailable !== undefined) {
      throw new ToolRegistrationError({
        problem: 'unavailable',
        toolName: name,
        reason: unavailable.reason,
        ...(planId === undefined ? {} : { planId }),
        ...(unavailable.error === undefined ? {} : { cause: unavailable.error }),
      });
    }
    throw new ToolNotFoundError({
      toolName: name,
      ...(planId === undefined ? {} : { planId }),
      suggestions: closestNames(name, snapshot.tools.keys()),
    });
  }

  /**
   * The instance of a registered tool, from its source, fetched once.
   * @throws ToolRegistrationError when the source cannot provide it.
   */
  instanceOf(entry: RegisteredTool, planId: string | undefined): Promise<ToolInstance> {
    entry.instancePromise ??= this.fetchInstance(entry, planId);
    return entry.instancePromise;
  }

  /**
   * Calls `listener` whenever a source reports that its tools changed (the
   * next discovery lists them again).
   * @returns A function that unsubscribes.
   */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Unsubscribes from the sources and disposes them; failures are logged. */
  async dispose(): Promise<void> {
    for (const unsubscribe of this.unsubscribers.splice(0)) unsubscribe();
    await Promise.all(
      this.sources.map(async (source) => {
        try {
          await source.dispose?.();
        } catch (error) {
          this.settings.logger.error(`Tool source '${source.id}' failed to dispose: ${messageOf(error)}`, { sourceId: source.id });
        }
      }),
    );
  }

  private async fetchInstance(entry: RegisteredTool, planId: string | undefined): Promise<ToolInstance> {
    const toolName = entry.descriptor.name;
    const sourceId = entry.source.id;
    const plan = planId === undefined ? {} : { planId };
    let instance: ToolInstance;
    try {
      instance = await entry.source.get(toolName);
    } catch (error) {
      entry.instancePromise = undefined;
      throw new ToolRegistrationError({ problem: 'not-provided', toolName, sourceId, cause: error, ...plan });
    }
    if (typeof instance?.execute !== 'function') {
      entry.instancePromise = undefined;
      throw new ToolRegistrationError({ problem: 'not-a-tool', toolName, sourceId, ...plan });
    }
    entry.instance = instance;
    return instance;
  }

  private load(signal?: AbortSignal): Promise<Snapshot> {
    if (this.snapshot !== undefined) return Promise.resolve(this.snapshot);
    this.loading ??= this.build(signal).then(
      (snapshot) => {
        this.snapshot = snapshot;
        this.loading = undefined;
        return snapshot;
      },
      (error: unknown) => {
        this.loading = undefined;
        throw error;
      },
    );
    return this.loading;
  }

  private subscribe(): void {
    if (this.unsubscribers.length > 0) return;
    for (const source of this.sources) {
      const unsubscribe = source.onToolsChanged?.(() => {
        this.snapshot = undefined;
        this.notifyChanged(source);
      });
      if (unsubscribe !== undefined) this.unsubscribers.push(unsubscribe);
    }
  }

  private notifyChanged(source: ToolSource): void {
    for (const listener of [...this.changeListeners]) {
      try {
        listener();
      } catch (error) {
        this.settings.logger.warn(`A listener of tool changes threw after source '${source.id}' changed: ${messageOf(error)}`, { sourceId: source.id });
      }
    }
  }

  private async build(signal?: AbortSignal): Promise<Snapshot> {
    this.subscribe();
    const listed = await Promise.all(this.sources.map((source) => this.list(source, signal)));
    const tools = new Map<string, RegisteredTool>();
    const unavailable = new Map<string, UnavailableTool>();
    const sourceErrors: SourceError[] = [];
    const owners = new Map<string, string>();
    const duplicates = new Map<string, string[]>();
    const definitions = new Map<string, ToolDescriptor[]>();
    const unavailableGroups: UnavailableTool[] = [];
    const failed: ToolSource[] = [];
    const unlistedNames: { source: ToolSource; name: string }[] = [];
    for (const { source, descriptors, error } of listed) {
      if (error !== undefined) {
        failed.push(source);
        this.settings.logger.error(`Tool source '${source.id}' could not be listed: ${error.message}`, { sourceId: source.id });
        sourceErrors.push({ sourceId: source.id, error });
        // Its parts that failed (an MCP server) still explain a missing name, though the source is reported as a whole.
        unavailableGroups.push(...this.reportedUnavailable(source));
        continue;
      }
      for (const item of source.unavailable?.() ?? []) {
        unavailable.set(item.name, item);
        unavailableGroups.push(item);
        if (typeof item?.name === 'string') unlistedNames.push({ source, name: item.name });
      }
      for (const raw of Array.isArray(descriptors) ? descriptors : []) {
        const name = (raw as { name?: unknown })?.name;
        const owner = typeof name === 'string' ? owners.get(name) : undefined;
        if (typeof name === 'string' && owner !== undefined) {
          const sourceIds = duplicates.get(name) ?? [owner];
          sourceIds.push(source.id);
          duplicates.set(name, sourceIds);
          continue;
        }
        if (typeof name === 'string') owners.set(name, source.id);
        const registered = this.register(source, raw);
        if ('reason' in registered) {
          unavailable.set(registered.name, registered);
          continue;
        }
        const scope = pinScopeOf(source, registered.descriptor.name);
        let offered = definitions.get(scope);
        if (offered === undefined) definitions.set(scope, (offered = []));
        offered.push(registered.descriptor);
        const verdict = this.settings.quarantine?.(source, registered.descriptor);
        if (verdict !== undefined && 'quarantined' in verdict) {
          const quarantined = verdict.quarantined;
          this.settings.logger.warn(quarantined.reason, { toolName: quarantined.name, sourceId: source.id, code: quarantined.error?.code });
          unavailable.set(quarantined.name, quarantined);
          continue;
        }
        // A pinned tool of a source that can confirm it is compared with what the source offers now before its first call.
        if (verdict !== undefined && typeof source.confirm === 'function') registered.pinToConfirm = verdict;
        tools.set(registered.descriptor.name, registered);
      }
    }
    if (duplicates.size > 0) {
      const list: DuplicateToolName[] = [...duplicates].map(([toolName, sourceIds]) => ({ toolName, sourceIds }));
      throw new ToolRegistrationError({ problem: 'duplicate', duplicates: list });
    }
    const result: DiscoveryResult = {
      tools: [...tools.values()].map((entry) => entry.descriptor).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
      unavailable: [...unavailable.values()],
      sourceErrors,
    };
    return { tools, unavailable, unavailableGroups, result, definitions, unlisted: { failed, unavailable: unlistedNames } };
  }

  /** What a source that could not be listed reports unavailable; one that throws here too reports nothing. */
  private reportedUnavailable(source: ToolSource): readonly UnavailableTool[] {
    try {
      const reported = source.unavailable?.() ?? [];
      return Array.isArray(reported) ? reported.filter((item) => typeof item?.name === 'string' && item.name.length > 0) : [];
    } catch {
      return [];
    }
  }

  /** One source's `discover`, within the deadline: a hung source must not hold up the others. */
  private async list(
    source: ToolSource,
    signal: AbortSignal | undefined,
  ): Promise<{ source: ToolSource; descriptors: readonly ToolDescriptor[]; error: (Error & { code?: string }) | undefined }> {
    const timeoutMs = this.settings.discoverTimeoutMs;
    const deadline = new AbortController();
    const combined = signal === undefined ? deadline.signal : AbortSignal.any([signal, deadline.signal]);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = Object.assign(
          new Error(
            `Tool source '${source.id}' did not finish discovery within ${timeoutMs} ms; its tools are left out. Check the source (a server that does not answer, a file that blocks), or raise the runtime's discoverTimeoutMs.`,
          ),
          { code: 'TOOL_DISCOVERY_TIMED_OUT' },
        );
        deadline.abort(error);
        reject(error);
      }, timeoutMs);
    });
    try {
      const descriptors = await Promise.race([Promise.resolve().then(() => source.discover(combined)), expired]);
      return { source, descriptors, error: undefined };
    } catch (error) {
      return { source, descriptors: [], error: error instanceof Error ? error : new Error(messageOf(error)) };
    } finally {
      clearTimeout(timer);
    }
  }

  private register(source: ToolSource, raw: unknown): RegisteredTool | UnavailableTool {
    const candidate = (typeof raw === 'object' && raw !== null ? raw : {}) as Partial<ToolDescriptor>;
    const name = typeof candidate.name === 'string' ? candidate.name : `<unnamed tool of ${source.id}>`;
    const unavailable = (reason: string, error?: Error): UnavailableTool => {
      this.settings.logger.warn(`Tool '${name}' of source '${source.id}' is unavailable: ${reason}`, { toolName: name, sourceId: source.id });
      return { name, source: source.kind, reason, ...(error === undefined ? {} : { error }) };
    };
    if (!isValidToolName(candidate.name)) {
      return unavailable(
        `its name ${describeValue(candidate.name)} is not valid: use 1–200 letters, digits, '_', '.', ':' or '-', starting with a letter, digit or '_'.`,
      );
    }
    if (!isToolSourceKind(candidate.source)) {
      return unavailable(
        `its source kind ${describeValue(candidate.source)} is not valid: use builtin, custom, mcp, skill, wrapped, or a kind of your own in lowercase letters, digits and '-'.`,
      );
    }
    if (candidate.timeoutMs !== undefined && !isTimeout(candidate.timeoutMs)) {
      return unavailable(`its timeoutMs ${describeValue(candidate.timeoutMs)} is not a positive number of milliseconds.`);
    }
    const sandboxed = candidate.sandboxed;
    if (sandboxed !== undefined && (typeof sandboxed !== 'object' || sandboxed === null || typeof sandboxed.overlay !== 'boolean')) {
      // Read loosely it would loosen the tool's capability in read-only and checkpoint plans: refused instead.
      return unavailable(`its sandboxed ${describeValue(sandboxed)} is not { overlay: true } or { overlay: false }.`);
    }
    let input: CompiledSchema | undefined;
    let output: CompiledSchema | undefined;
    const trust = schemaTrustOf(source);
    try {
      const validator = this.settings.validator;
      if (candidate.inputSchema !== undefined) input = validator.compile(candidate.inputSchema, { toolName: name, direction: 'input', trust });
      if (candidate.outputSchema !== undefined) output = validator.compile(candidate.outputSchema, { toolName: name, direction: 'output', trust });
    } catch (error) {
      const reason = SchemaCompileError.isInstance(error) ? error.message : `its schema cannot be compiled: ${messageOf(error)}`;
      return unavailable(reason, error instanceof Error ? error : new Error(messageOf(error)));
    }
    const descriptor: ToolDescriptor = Object.freeze({
      ...candidate,
      name: candidate.name,
      description: typeof candidate.description === 'string' ? candidate.description : '',
      source: candidate.source,
      capability: normalizeCapability(candidate.capability),
      ...(sandboxed === undefined ? {} : { sandboxed: Object.freeze({ overlay: sandboxed.overlay }) }),
    }) as ToolDescriptor;
    return {
      descriptor,
      source,
      input,
      output,
      strictOutput: this.settings.strictOutput || candidate.strictOutput === true,
      timeoutMs: candidate.timeoutMs ?? this.settings.defaultTimeoutMs,
      instance: undefined,
      instancePromise: undefined,
      ruled: undefined,
      hooks: undefined,
      pinToConfirm: undefined,
      confirming: undefined,
    };
  }
}

/**
 * @internal The one place that decides how a source's schemas are compiled:
 * as the source declares, and untrusted when it declares nothing. Schemas
 * from elsewhere (an MCP server, a skill, a team's adapter reading a remote
 * catalogue) are the common case for a source that does not say, and wrongly
 * trusting one can freeze the process, while wrongly distrusting one only
 * refuses lookaround, with a reason.
 */
export function schemaTrustOf(source: ToolSource): SchemaTrust {
  return source.schemaTrust === 'trusted' ? 'trusted' : 'untrusted';
}

/** @internal A deadline in ms that `setTimeout` can hold. */
export function isTimeout(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= 2_147_483_647;
}

/** The unavailable entry whose name is the longest dotted prefix of `name` (`mcp.files` for `mcp.files.read`), if any. */
function groupOf(entries: readonly UnavailableTool[], name: string): UnavailableTool | undefined {
  let found: UnavailableTool | undefined;
  for (const entry of entries) {
    if (name.startsWith(`${entry.name}.`) && (found === undefined || entry.name.length > found.name.length)) found = entry;
  }
  return found;
}

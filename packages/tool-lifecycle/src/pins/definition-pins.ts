import { normalizeCapability } from '@ca/domain';
import type { InjectionToken } from 'tsyringe';
import { canonicalJson, digest, fingerprintTool } from '../approval';
import { ToolActivationError, ToolDefinitionChangedError, ToolInvalidArgumentError } from '../errors';
import type { ToolDescriptor, ToolSource, UnavailableTool } from '../tool';

/** What a pin keeps of a tool's definition: enough to show what changed. */
export interface PinnedToolDefinition {
  readonly description: string;
  readonly source: string;
  readonly capability: Readonly<Record<string, boolean>>;
  readonly inputSchema?: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: Readonly<Record<string, unknown>>;
}

/** One tool's pin: its fingerprint (the one approvals are bound to), a digest of its annotations, and its definition. */
export interface PinnedDefinition {
  /** `fingerprintTool(descriptor)`: name, description, source kind, capability, schemas. */
  readonly fingerprint: string;
  /** SHA-256 of the canonical JSON of its annotations (which the fingerprint leaves out); absent when it has none. */
  readonly annotations?: string;
  readonly definition: PinnedToolDefinition;
}

/**
 * Pinned definitions, by pin scope then tool name: what `agents tools lock`
 * writes (`agents.lock.json`). A scope is what a source names with
 * `ToolSource.pinScope` — one per MCP server (`mcp:<server>`), the source's
 * id for the others — so a tool's pin does not depend on which other sources
 * or servers are configured or started.
 */
export interface DefinitionLock {
  readonly lockfileVersion: 2;
  readonly scopes: Readonly<Record<string, Readonly<Record<string, PinnedDefinition>>>>;
}

/**
 * The first form of the lock, by source id (an MCP source's id joins its
 * servers' names: `mcp:notes,secrets`). Still read: {@link upgradeDefinitionLock}.
 */
export interface DefinitionLockV1 {
  readonly lockfileVersion: 1;
  readonly sources: Readonly<Record<string, Readonly<Record<string, PinnedDefinition>>>>;
}

/**
 * Where the runtime reads the pinned definitions of each scope. A scope that
 * has pins has all its tools checked at discovery: a tool whose definition no
 * longer matches, or that the scope did not have, is quarantined
 * (`ToolDefinitionChangedError`); and before its first call the tool is
 * confirmed with its source (`ToolSource.confirm`: an MCP server's live list,
 * when the list came from a cache). A scope without pins is not checked.
 */
export interface DefinitionPins {
  /** The pins of a scope (see `ToolSource.pinScope`), by tool name; undefined when the scope is not pinned. */
  pinned(scope: string): Readonly<Record<string, PinnedDefinition>> | undefined;
}

/** The definition pins of the runtime (register one to pin tool definitions). */
export const DEFINITION_PINS: InjectionToken<DefinitionPins> = Symbol.for('ca.tool-lifecycle.DefinitionPins');

/**
 * Pins kept in memory, from a lock (a parsed `agents.lock.json`; a version-1
 * lock is upgraded, see {@link upgradeDefinitionLock}); `replace` accepts a
 * new lock (then rediscover with `discover({ refresh: true })`).
 */
export class MemoryDefinitionPins implements DefinitionPins {
  private lock: DefinitionLock;

  /** @throws ToolInvalidArgumentError for a lock of the wrong shape. */
  constructor(lock: DefinitionLock | DefinitionLockV1 = { lockfileVersion: 2, scopes: {} }) {
    this.lock = upgradeDefinitionLock(lock);
  }

  pinned(scope: string): Readonly<Record<string, PinnedDefinition>> | undefined {
    return Object.hasOwn(this.lock.scopes, scope) ? this.lock.scopes[scope] : undefined;
  }

  /** @throws ToolInvalidArgumentError for a lock of the wrong shape. */
  replace(lock: DefinitionLock | DefinitionLockV1): void {
    this.lock = upgradeDefinitionLock(lock);
  }

  /** The lock the pins hold (version 2). */
  toLock(): DefinitionLock {
    return this.lock;
  }
}

/**
 * The scope a source pins a tool under: its `pinScope(toolName)` when it has
 * one and it answers a non-empty string, else the source's id.
 */
export function pinScopeOf(source: Pick<ToolSource, 'id' | 'pinScope'>, toolName: string): string {
  if (typeof source.pinScope !== 'function') return source.id;
  let scope: unknown;
  try {
    scope = source.pinScope(toolName);
  } catch {
    scope = undefined;
  }
  return typeof scope === 'string' && scope.length > 0 ? scope : source.id;
}

/**
 * A lock in the current form. Version 2 is checked and returned as is. A
 * version-1 lock is keyed by source id; its pins move to the scope of their
 * tool: under a key that joins several names (`mcp:notes,secrets`, the id of
 * an MCP source with two servers), a tool named `<prefix>.<name>.…` whose
 * `<name>` is one of them goes to `<prefix>:<name>` (`mcp.notes.read` →
 * `mcp:notes`); every other pin keeps its key (the id of a source without
 * scopes of its own, or of one MCP server).
 * @throws ToolInvalidArgumentError for a lock of the wrong shape.
 */
export function upgradeDefinitionLock(lock: DefinitionLock | DefinitionLockV1): DefinitionLock {
  const checked = checkLock(lock);
  if (checked.lockfileVersion === 2) return checked;
  const scopes: Record<string, Record<string, PinnedDefinition>> = {};
  for (const [sourceId, tools] of Object.entries(checked.sources)) {
    const split = /^([a-z][a-z0-9-]*):(.+)$/.exec(sourceId);
    const names = split === null ? [] : (split[2] as string).split(',');
    for (const [toolName, pin] of Object.entries(tools)) {
      const part = split === null ? undefined : names.find((name) => name.length > 0 && toolName.startsWith(`${split[1]}.${name}.`));
      const scope = part === undefined ? sourceId : `${(split as RegExpExecArray)[1]}:${part}`;
      (scopes[scope] ??= {})[toolName] = pin;
    }
    // A source that was pinned with no tool stays pinned.
    if (Object.keys(tools).length === 0) scopes[sourceId] ??= {};
  }
  return { lockfileVersion: 2, scopes };
}

/** The pin of a tool as its source offers it now. */
export function pinDefinition(descriptor: ToolDescriptor): PinnedDefinition {
  const { description, source, capability, inputSchema, outputSchema, annotations } = descriptor;
  const definition: PinnedToolDefinition = {
    description,
    source,
    capability: { ...capability },
    ...(inputSchema === undefined ? {} : { inputSchema }),
    ...(outputSchema === undefined ? {} : { outputSchema }),
    ...(annotations === undefined ? {} : { annotations }),
  };
  return {
    fingerprint: fingerprintTool(descriptor),
    ...(annotations === undefined ? {} : { annotations: digest(canonicalJson(annotations)) }),
    definition,
  };
}

const MAX_DIFF_LINES = 20;
const MAX_SHOWN = 160;

/**
 * What differs between a pin and a tool as offered now, one line per field;
 * an empty list when they match (same fingerprint, same annotations).
 */
export function definitionDiff(pin: PinnedDefinition, descriptor: ToolDescriptor): string[] {
  const now = pinDefinition(descriptor);
  if (now.fingerprint === pin.fingerprint && now.annotations === pin.annotations) return [];
  const before = pin.definition;
  const after = now.definition;
  const lines: string[] = [];
  if (before.description !== after.description) lines.push(`description: ${shown(before.description)} → ${shown(after.description)}`);
  if (before.source !== after.source) lines.push(`source kind: ${before.source} → ${after.source}`);
  for (const key of new Set([...Object.keys(before.capability ?? {}), ...Object.keys(after.capability)])) {
    if (before.capability?.[key] !== after.capability[key])
      lines.push(`capability.${key}: ${String(before.capability?.[key])} → ${String(after.capability[key])}`);
  }
  for (const field of ['inputSchema', 'outputSchema', 'annotations'] as const) {
    for (const change of jsonChanges(before[field], after[field], `${field}`)) lines.push(change);
  }
  // The fingerprint covers what the pin shows; a difference the lines above miss is still a change.
  if (lines.length === 0) lines.push(`fingerprint: ${pin.fingerprint} → ${now.fingerprint}`);
  return lines.length > MAX_DIFF_LINES ? [...lines.slice(0, MAX_DIFF_LINES), `… and ${lines.length - MAX_DIFF_LINES} more`] : lines;
}

/** Where two JSON values differ, as `path: before → after` lines (paths as JSON pointers under `at`). */
function jsonChanges(before: unknown, after: unknown, at: string, depth = 0): string[] {
  if (canonicalJson(before ?? null) === canonicalJson(after ?? null)) return [];
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (depth < 32 && isObject(before) && isObject(after)) {
    return [...new Set([...Object.keys(before), ...Object.keys(after)])]
      .sort()
      .flatMap((key) => jsonChanges(before[key], after[key], `${at}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, depth + 1));
  }
  return [`${at}: ${before === undefined ? '(none)' : cut(canonicalJson(before))} → ${after === undefined ? '(none)' : cut(canonicalJson(after))}`];
}

/** A text as the diff shows it: quoted, cut at 160 characters. */
function shown(value: string): string {
  return JSON.stringify(cut(value));
}

function cut(value: string): string {
  return value.length > MAX_SHOWN ? `${value.slice(0, MAX_SHOWN)}…` : value;
}

/** What the pins say of a tool the catalog discovers. */
export type PinVerdict =
  /** Its scope is pinned and it does not match its pin (or has none): quarantined, unavailable with this entry. */
  | { readonly quarantined: UnavailableTool }
  /** It matches its pin: it is confirmed with its source before its first call. */
  | { readonly pin: PinnedDefinition; readonly scope: string };

/**
 * The check the catalog runs on each tool it discovers: `undefined` when its
 * scope is not pinned; else whether it matches its pin.
 */
export function quarantineCheck(pins: DefinitionPins): (source: ToolSource, descriptor: ToolDescriptor) => PinVerdict | undefined {
  return (source, descriptor) => {
    const scope = pinScopeOf(source, descriptor.name);
    const pinned = pins.pinned(scope);
    if (pinned === undefined) return undefined;
    const pin = Object.hasOwn(pinned, descriptor.name) ? pinned[descriptor.name] : undefined;
    const diff = pin === undefined ? [] : definitionDiff(pin, descriptor);
    if (pin !== undefined && diff.length === 0) return { pin, scope };
    const error = new ToolDefinitionChangedError({
      toolName: descriptor.name,
      sourceId: source.id,
      scope,
      change: pin === undefined ? 'new' : 'changed',
      diff,
    });
    return { quarantined: { name: descriptor.name, source: descriptor.source, reason: error.message, error } };
  };
}

/**
 * Confirms a pinned tool with its source before its first call: the
 * definition the source offers now (`ToolSource.confirm`; an MCP server's live
 * list when the catalog's came from a cache) must still match the pin.
 * Resolves when it does (or the source cannot confirm).
 * @throws ToolDefinitionChangedError when the source now offers another definition, or no longer offers the tool.
 * @throws ToolActivationError when the source could not be asked (a server that does not start).
 */
export async function confirmPinnedDefinition(
  source: ToolSource,
  descriptor: ToolDescriptor,
  pinned: { readonly pin: PinnedDefinition; readonly scope: string },
  planId: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (typeof source.confirm !== 'function') return;
  const toolName = descriptor.name;
  let live: ToolDescriptor | undefined;
  try {
    live = await source.confirm(toolName, signal);
  } catch (error) {
    // Not run unconfirmed: its pinned definition could not be compared with what the source offers now.
    throw new ToolActivationError({ toolName, planId, cause: error });
  }
  const changed = (change: 'changed' | 'removed', diff: readonly string[]) =>
    new ToolDefinitionChangedError({ toolName, sourceId: source.id, scope: pinned.scope, change, diff, planId });
  if (live === undefined || live === null || typeof live !== 'object') throw changed('removed', []);
  const now: ToolDescriptor = {
    ...live,
    name: toolName,
    description: typeof live.description === 'string' ? live.description : '',
    source: live.source,
    capability: normalizeCapability(live.capability),
  };
  const diff = definitionDiff(pinned.pin, now);
  if (diff.length > 0) throw changed('changed', diff);
}

/** Builds a lock from what each scope offers now; scopes in `keep` keep their pins from `previous` (their source could not be listed). */
export function createDefinitionLock(
  definitions: ReadonlyMap<string, readonly ToolDescriptor[]>,
  previous: DefinitionLock | DefinitionLockV1 | undefined,
  keep: readonly string[],
): DefinitionLock {
  const before = previous === undefined ? undefined : upgradeDefinitionLock(previous);
  const scopes: Record<string, Record<string, PinnedDefinition>> = {};
  for (const scope of [...definitions.keys()].sort()) {
    const tools: Record<string, PinnedDefinition> = {};
    for (const descriptor of [...(definitions.get(scope) ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      tools[descriptor.name] = pinDefinition(descriptor);
    }
    scopes[scope] = tools;
  }
  for (const scope of keep) {
    const kept = before?.scopes[scope];
    if (kept !== undefined && !Object.hasOwn(scopes, scope)) scopes[scope] = { ...kept };
  }
  return { lockfileVersion: 2, scopes: Object.fromEntries(Object.entries(scopes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
}

function checkLock(lock: DefinitionLock | DefinitionLockV1): DefinitionLock | DefinitionLockV1 {
  const fail = (): never => {
    throw new ToolInvalidArgumentError({
      argument: 'lock',
      expected:
        "a definition lock: { lockfileVersion: 2, scopes: { [scope]: { [toolName]: { fingerprint, definition } } } } (as 'agents tools lock' writes it), or a version-1 lock ({ lockfileVersion: 1, sources: { … } })",
      received: lock,
    });
  };
  if (typeof lock !== 'object' || lock === null) fail();
  const groups = lock.lockfileVersion === 2 ? (lock as DefinitionLock).scopes : lock.lockfileVersion === 1 ? (lock as DefinitionLockV1).sources : fail();
  if (typeof groups !== 'object' || groups === null || Array.isArray(groups)) fail();
  for (const tools of Object.values(groups)) {
    if (typeof tools !== 'object' || tools === null || Array.isArray(tools)) fail();
    for (const pin of Object.values(tools)) {
      if (typeof pin?.fingerprint !== 'string' || typeof pin.definition !== 'object' || pin.definition === null) fail();
    }
  }
  return lock;
}

import type { InjectionToken } from 'tsyringe';
import { canonicalJson, digest, fingerprintTool } from '../approval';
import { ToolDefinitionChangedError, ToolInvalidArgumentError } from '../errors';
import type { ToolDescriptor, UnavailableTool } from '../tool';

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

/** Pinned definitions, by source id then tool name: what `agents tools lock` writes (`agents.lock.json`). */
export interface DefinitionLock {
  readonly lockfileVersion: 1;
  readonly sources: Readonly<Record<string, Readonly<Record<string, PinnedDefinition>>>>;
}

/**
 * Where the runtime reads the pinned definitions of each source. A source
 * that has pins has all its tools checked at discovery: a tool whose
 * definition no longer matches, or that the source did not have, is
 * quarantined (`ToolDefinitionChangedError`). A source without pins is not checked.
 */
export interface DefinitionPins {
  /** The pins of a source, by tool name; undefined when the source is not pinned. */
  pinned(sourceId: string): Readonly<Record<string, PinnedDefinition>> | undefined;
}

/** The definition pins of the runtime (register one to pin tool definitions). */
export const DEFINITION_PINS: InjectionToken<DefinitionPins> = Symbol.for('ca.tool-lifecycle.DefinitionPins');

/**
 * Pins kept in memory, from a lock (a parsed `agents.lock.json`); `replace`
 * accepts a new lock (then rediscover with `discover({ refresh: true })`).
 */
export class MemoryDefinitionPins implements DefinitionPins {
  private lock: DefinitionLock;

  /** @throws ToolInvalidArgumentError for a lock of the wrong shape. */
  constructor(lock: DefinitionLock = { lockfileVersion: 1, sources: {} }) {
    this.lock = checkLock(lock);
  }

  pinned(sourceId: string): Readonly<Record<string, PinnedDefinition>> | undefined {
    return Object.hasOwn(this.lock.sources, sourceId) ? this.lock.sources[sourceId] : undefined;
  }

  /** @throws ToolInvalidArgumentError for a lock of the wrong shape. */
  replace(lock: DefinitionLock): void {
    this.lock = checkLock(lock);
  }

  /** The lock the pins hold. */
  toLock(): DefinitionLock {
    return this.lock;
  }
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

/**
 * The check the catalog runs on each tool it discovers: the tool, unavailable
 * with `ToolDefinitionChangedError` and the diff, when its source is pinned
 * and the tool does not match its pin (or has none); `undefined` otherwise.
 */
export function quarantineCheck(pins: DefinitionPins): (sourceId: string, descriptor: ToolDescriptor) => UnavailableTool | undefined {
  return (sourceId, descriptor) => {
    const pinned = pins.pinned(sourceId);
    if (pinned === undefined) return undefined;
    const pin = Object.hasOwn(pinned, descriptor.name) ? pinned[descriptor.name] : undefined;
    const diff = pin === undefined ? [] : definitionDiff(pin, descriptor);
    if (pin !== undefined && diff.length === 0) return undefined;
    const error = new ToolDefinitionChangedError({ toolName: descriptor.name, sourceId, change: pin === undefined ? 'new' : 'changed', diff });
    return { name: descriptor.name, source: descriptor.source, reason: error.message, error };
  };
}

/** Builds a lock from what each source offers now; sources in `keep` keep their pins from `previous` (they could not be listed). */
export function createDefinitionLock(
  definitions: ReadonlyMap<string, readonly ToolDescriptor[]>,
  previous: DefinitionLock | undefined,
  keep: readonly string[],
): DefinitionLock {
  const sources: Record<string, Record<string, PinnedDefinition>> = {};
  for (const sourceId of [...definitions.keys()].sort()) {
    const tools: Record<string, PinnedDefinition> = {};
    for (const descriptor of [...(definitions.get(sourceId) ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      tools[descriptor.name] = pinDefinition(descriptor);
    }
    sources[sourceId] = tools;
  }
  for (const sourceId of keep) {
    const kept = previous?.sources[sourceId];
    if (kept !== undefined) sources[sourceId] = { ...kept };
  }
  return { lockfileVersion: 1, sources };
}

function checkLock(lock: DefinitionLock): DefinitionLock {
  const fail = (): never => {
    throw new ToolInvalidArgumentError({
      argument: 'lock',
      expected:
        "a definition lock: { lockfileVersion: 1, sources: { [sourceId]: { [toolName]: { fingerprint, definition } } } } (as 'agents tools lock' writes it)",
      received: lock,
    });
  };
  if (typeof lock !== 'object' || lock === null || lock.lockfileVersion !== 1 || typeof lock.sources !== 'object' || lock.sources === null) fail();
  for (const tools of Object.values(lock.sources)) {
    if (typeof tools !== 'object' || tools === null) fail();
    for (const pin of Object.values(tools)) {
      if (typeof pin?.fingerprint !== 'string' || typeof pin.definition !== 'object' || pin.definition === null) fail();
    }
  }
  return lock;
}

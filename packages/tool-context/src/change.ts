import { ContextValidationError } from './context-validation-error';
import { describeType } from './describe-type';
import { isIsoTimestamp } from './iso-timestamp';

/** What a {@link Change} did to its target. */
export type ChangeKind = 'create' | 'modify' | 'delete' | 'rename' | 'other';

/** Every {@link ChangeKind}, in a stable order. */
export const CHANGE_KINDS: readonly ChangeKind[] = Object.freeze(['create', 'modify', 'delete', 'rename', 'other']);

/**
 * One change a tool made to the world, recorded in the plan's context in the
 * order it happened, attributed to the tool and execution. With `undo` data a
 * plan can be rolled back (checkpointable tools always provide it).
 */
export interface Change {
  /** What was done. */
  readonly kind: ChangeKind;
  /** What was changed: a path, a URI, a record key. */
  readonly target: string;
  /** The {@link BoundResource} the target belongs to, when there is one. */
  readonly resourceId?: string;
  /** The tool that made the change. */
  readonly toolName: string;
  /** The execution that made it. */
  readonly executionId: string;
  /** When, as ISO-8601 (e.g. `new Date().toISOString()`). */
  readonly at: string;
  /** A short human-readable description. */
  readonly summary?: string;
  /** Tool-specific data to reverse the change (e.g. the previous content of a file). Stored as given, not copied. */
  readonly undo?: unknown;
}

/** What a tool reports; the runtime adds toolName, executionId and at. */
export type ChangeInput = Omit<Change, 'toolName' | 'executionId' | 'at'> & { readonly at?: string };

/** Validates a change and returns a frozen copy holding only the known fields. */
export function freezeChange(change: unknown, planId: string): Change {
  const fail = (field: string, message: string): never => {
    throw new ContextValidationError({ field: `change${field}`, planId, message });
  };
  if (typeof change !== 'object' || change === null || Array.isArray(change)) {
    fail('', `recordChange expects { kind, target, toolName, executionId, at, … }, got ${describeType(change)}.`);
  }
  const { kind, target, resourceId, toolName, executionId, at, summary, undo } = change as Record<string, unknown>;
  if (typeof kind !== 'string' || !(CHANGE_KINDS as readonly string[]).includes(kind)) {
    fail('.kind', `expected one of ${CHANGE_KINDS.map((name) => `"${name}"`).join(', ')}, got ${describeType(kind)}.`);
  }
  if (typeof target !== 'string' || target.length === 0) {
    fail('.target', `expected a non-empty string naming what changed (a path or URI), got ${describeType(target)}.`);
  }
  if (typeof toolName !== 'string' || toolName.length === 0) {
    fail('.toolName', `expected the name of the tool that made the change, got ${describeType(toolName)}.`);
  }
  if (typeof executionId !== 'string' || executionId.length === 0) {
    fail('.executionId', `expected the id of the execution that made the change, got ${describeType(executionId)}.`);
  }
  if (!isIsoTimestamp(at)) {
    fail('.at', `expected an ISO-8601 timestamp such as new Date().toISOString(), got ${describeType(at)}.`);
  }
  if (resourceId !== undefined && (typeof resourceId !== 'string' || resourceId.length === 0)) {
    fail('.resourceId', `expected the id of a bound resource or nothing, got ${describeType(resourceId)}.`);
  }
  if (summary !== undefined && typeof summary !== 'string') {
    fail('.summary', `expected a string or nothing, got ${describeType(summary)}.`);
  }
  const copy: { -readonly [K in keyof Change]: Change[K] } = {
    kind: kind as ChangeKind,
    target: target as string,
    toolName: toolName as string,
    executionId: executionId as string,
    at: at as string,
  };
  if (resourceId !== undefined) copy.resourceId = resourceId as string;
  if (summary !== undefined) copy.summary = summary as string;
  if (undo !== undefined) copy.undo = undo;
  return Object.freeze(copy);
}

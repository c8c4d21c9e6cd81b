import type { PlanContext } from '@ca/tool-context';
import { ToolInvalidArgumentError } from '../errors';

/**
 * The execution a tool's view was given to, for a tool that makes calls of
 * its own in the plan (`@ca/code-mode`'s `code.run`): see `ToolRuntime.callerOf`.
 */
export interface ToolCaller {
  /** The plan the execution runs in: what inner calls are made in. */
  readonly ctx: PlanContext;
  /** The execution's id: the inner calls' `parentExecutionId`. */
  readonly executionId: string;
  readonly toolName: string;
  /** The caller's step id of the execution, when it was made with one (`execute(…, { step })`). */
  readonly step?: string;
}

/**
 * The step id of the `ordinal`-th inner call of `caller` (1, 2, …):
 * `<caller's step>/<ordinal>`, or `<caller's execution id>/<ordinal>` for a
 * caller made without a step. The same in every process that makes the caller's
 * step again in the same order, so the plan's call journal answers an inner
 * call already made instead of making it twice.
 * @throws ToolInvalidArgumentError for an ordinal that is not a whole number ≥ 1.
 */
export function innerCallStep(caller: ToolCaller, ordinal: number): string {
  if (!Number.isSafeInteger(ordinal) || ordinal < 1) {
    throw new ToolInvalidArgumentError({ argument: 'ordinal', expected: 'a whole number ≥ 1', received: ordinal, toolName: caller?.toolName });
  }
  return `${caller.step ?? caller.executionId}/${ordinal}`;
}

/** `options.parentExecutionId`, checked: an execution id (1–200 characters). */
export function checkParent(parent: unknown, toolName: string, planId: string): string {
  if (typeof parent === 'string' && parent.length > 0 && parent.length <= 200) return parent;
  throw new ToolInvalidArgumentError({
    argument: 'options.parentExecutionId',
    expected: 'the id of the execution the call is made from (1–200 characters)',
    received: parent,
    toolName,
    planId,
  });
}

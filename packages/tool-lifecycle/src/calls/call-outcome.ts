import { ToolSchemaValidationError } from '@ca/schema';
import type { RegisteredTool } from '../catalog';
import { ToolExecutionError } from '../errors';
import type { ExecutionRecorder } from '../observability';
import type { ExecutionResult, ToolFailure, ToolResult } from '../tool';
import type { CallAttempts } from './call-attempts';
import type { Execution } from '../observability';
import { jsonByteLength } from './json-size';

/**
 * Steps 6 and 7 of an execution: the changes recorded (first, so a failed
 * output check keeps them), the size of the serialised output (for the trace)
 * and checked against the tool's output schema, and the execution traced.
 */
export function finishCall(
  runner: CallAttempts,
  recorder: ExecutionRecorder,
  execution: Execution,
  tool: RegisteredTool,
  raw: unknown,
): ExecutionResult<never> {
  const { result, size } = settleCall(runner, execution, tool, raw);
  return recorder.complete(execution, result, size);
}

/** Steps 6 and 7 without the trace: the result as the caller gets it, and the size of its output. */
export function settleCall(runner: CallAttempts, execution: Execution, tool: RegisteredTool, raw: unknown): { result: ToolResult; size: number } {
  const { toolName, ctx } = execution;
  const planId = ctx.planId;
  let result = checkResult(raw, toolName, planId);
  if (result.changes !== undefined) runner.recordChanges(execution, result.changes);
  let size = 0;
  if (result.ok) {
    try {
      // The bytes JSON.stringify would write, counted without writing them.
      size = jsonByteLength(result.output) ?? 0;
    } catch (error) {
      result = { ok: false, error: new ToolExecutionError({ toolName, planId, failure: 'unserialisable-output', cause: error }) };
    }
    if (result.ok && tool.output !== undefined) {
      const check = tool.output.validate(result.output);
      if (!check.valid) {
        const error = new ToolSchemaValidationError({ direction: 'output', issues: check.issues, toolName, planId });
        if (tool.strictOutput) {
          result = { ...result, ok: false, error } as ToolFailure;
        } else {
          runner.logger.warn(error.message, { code: error.code, toolName, planId, executionId: execution.executionId, issues: check.issues });
        }
      }
    }
  }
  return { result, size };
}

/** What the tool returned, as a result: a failure without an `Error` and anything that is not a result become `ToolExecutionError`s. */
function checkResult(raw: unknown, toolName: string, planId: string): ToolResult {
  if (typeof raw === 'object' && raw !== null) {
    const result = raw as ToolResult;
    if (result.ok === true) return result;
    if (result.ok === false) {
      if (result.error instanceof Error) return result;
      return { ...result, error: new ToolExecutionError({ toolName, planId, failure: 'reported', cause: result.error }) };
    }
  }
  return { ok: false, error: new ToolExecutionError({ toolName, planId, failure: 'invalid-result', returned: raw }) };
}

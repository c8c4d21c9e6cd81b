import { normalizeCapability } from '@ca/domain';
import type { ToolExecutionContext } from '@ca/tool-context';
import { toolFailure, toolSuccess, type ToolInstance } from '../tool';
import type { ResultGrepRequest, ResultHandles, ResultReadRequest } from './result-handles';
import { ToolResultError } from './tool-result-error';

const READ_ONLY = normalizeCapability({ writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false });

const HANDLE = {
  type: 'string',
  pattern: '^res-[a-z0-9]{24}$',
  description: 'The handle of a stored result (res-…), from an output that was too large to return whole.',
};

/**
 * `results.read` and `results.grep`: read-only tools over the plan's stored
 * results, each confined to the plan that calls it (a handle of another plan
 * is not found). A read or search that does not fit the result is a failed
 * result with `TOOL_RESULT_READ_INVALID`, an unknown handle
 * `TOOL_RESULT_NOT_FOUND`.
 */
export function createResultTools(handles: ResultHandles): ToolInstance[] {
  const read: ToolInstance<ResultReadRequest> = {
    descriptor: {
      name: 'results.read',
      description:
        'Reads part of a stored tool result (an output too large to return whole, kept behind a handle such as res-…): a range of lines (from 1), a range of bytes, or the value at a JSON pointer of a JSON result.',
      source: 'builtin',
      capability: READ_ONLY,
      inputSchema: {
        type: 'object',
        properties: {
          handle: HANDLE,
          lines: {
            type: 'object',
            description: 'Lines to read, from 1, both ends included (default: 100 lines from "from").',
            properties: { from: { type: 'integer', minimum: 1 }, to: { type: 'integer', minimum: 1 } },
            required: ['from'],
            additionalProperties: false,
          },
          bytes: {
            type: 'object',
            description: 'Bytes to read: from "start" (from 0) to "end", not included.',
            properties: { start: { type: 'integer', minimum: 0 }, end: { type: 'integer', minimum: 1 } },
            required: ['start'],
            additionalProperties: false,
          },
          pointer: { type: 'string', maxLength: 1000, description: "A JSON pointer into a JSON result, e.g. '/items/0/name' ('' for all of it)." },
          maxBytes: { type: 'integer', minimum: 256, maximum: 262144, description: 'Most bytes of text to return (default 16384).' },
        },
        required: ['handle'],
        additionalProperties: false,
      },
      annotations: { runtimeTool: true },
    },
    execute: (input, ctx) => answer(() => handles.read(ctx.planId, input, ctx.signal), ctx),
  };
  const grep: ToolInstance<ResultGrepRequest> = {
    descriptor: {
      name: 'results.grep',
      description:
        'Searches a stored tool result (kept behind a handle such as res-…) line by line for a regular expression (RE2 syntax) and returns the matching lines with their numbers.',
      source: 'builtin',
      capability: READ_ONLY,
      inputSchema: {
        type: 'object',
        properties: {
          handle: HANDLE,
          pattern: { type: 'string', minLength: 1, maxLength: 1000, description: 'A regular expression in RE2 syntax (no lookaround, no backreferences).' },
          ignoreCase: { type: 'boolean', description: 'Match letters regardless of case.' },
          maxMatches: { type: 'integer', minimum: 1, maximum: 1000, description: 'Most matching lines to return (default 50).' },
        },
        required: ['handle', 'pattern'],
        additionalProperties: false,
      },
      annotations: { runtimeTool: true },
    },
    execute: (input, ctx) => answer(() => handles.grep(ctx.planId, input, ctx.signal), ctx),
  };
  return [read as ToolInstance, grep as ToolInstance];
}

async function answer<T>(work: () => Promise<T>, ctx: ToolExecutionContext) {
  try {
    return toolSuccess(await work());
  } catch (error) {
    if (ToolResultError.isInstance(error)) return toolFailure(error.forTool(ctx.toolName ?? 'results'));
    ctx.signal.throwIfAborted();
    throw error;
  }
}

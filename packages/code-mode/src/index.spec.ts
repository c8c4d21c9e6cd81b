import { ToolRuntime, silentLogger } from '@ca/tool-lifecycle';
import * as publicApi from './index';
import { CodeModeError, DEFAULT_CODE_LIMITS, createCodeMode } from './index';

describe('@ca/code-mode public API', () => {
  it('exports exactly the documented names', () => {
    expect(Object.keys(publicApi).sort()).toEqual([
      'CodeModeError',
      'DEFAULT_CODE_LIMITS',
      'LIMIT_OF_CODE',
      'SandboxPool',
      'ToolNames',
      'createCodeMode',
      'declareApi',
      'declareTool',
      'identifierOf',
      'stripTypes',
      'typeOf',
    ]);
  });

  it('refuses invalid options with coded errors, before starting any worker', () => {
    const runtime = new ToolRuntime({ logger: silentLogger });
    expect(() => createCodeMode(undefined as never)).toThrow(expect.objectContaining({ code: 'TOOL_INVALID_ARGUMENT' }));
    expect(() => createCodeMode({ runtime: {} as never })).toThrow(expect.objectContaining({ code: 'TOOL_INVALID_ARGUMENT' }));
    expect(() => createCodeMode({ runtime, toolName: '' })).toThrow(expect.objectContaining({ code: 'TOOL_INVALID_ARGUMENT' }));
    expect(() => createCodeMode({ runtime, limits: { timeMs: 0 } })).toThrow(expect.objectContaining({ code: 'TOOL_INVALID_ARGUMENT' }));
    expect(() => createCodeMode({ runtime, limits: { stackBytes: 1024 * 1024 } })).toThrow(/host's own/);
    expect(() => createCodeMode({ runtime, limits: { memoryBytes: 1000 } })).toThrow(expect.objectContaining({ code: 'TOOL_INVALID_ARGUMENT' }));
    expect(() => createCodeMode({ runtime, limits: { nope: 1 } as never })).toThrow(expect.objectContaining({ code: 'TOOL_INVALID_ARGUMENT' }));
    expect(DEFAULT_CODE_LIMITS).toMatchObject({ timeMs: 5_000, maxCalls: 100, maxConcurrentCalls: 16 });
  });

  it('a limit error names its limit and value, and says what to do', () => {
    const error = new CodeModeError({
      code: 'CODE_CALL_LIMIT',
      toolName: 'code.run',
      planId: 'p1',
      detail: 'the program made more than 100 calls',
      value: 100,
    });
    expect(error).toMatchObject({ code: 'CODE_CALL_LIMIT', limit: 'maxCalls', value: 100, toolName: 'code.run', planId: 'p1' });
    expect(error.message).toMatch(/^'code.run' in plan 'p1': the program made more than 100 calls\. .*raise limits\.maxCalls/);
    expect(CodeModeError.isInstance(error)).toBe(true);
  });
});

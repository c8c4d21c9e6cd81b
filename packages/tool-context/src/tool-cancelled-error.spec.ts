import { ToolCancelledError } from './tool-cancelled-error';

describe('ToolCancelledError', () => {
  it('carries a stable code, the reason, tool and plan, and names them in the message', () => {
    const error = new ToolCancelledError({ reason: 'cancelled by user', toolName: 'mcp.fs.read', planId: 'plan-1' });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ToolCancelledError');
    expect(error.code).toBe('TOOL_CANCELLED');
    expect(error.reason).toBe('cancelled by user');
    expect(error.toolName).toBe('mcp.fs.read');
    expect(error.planId).toBe('plan-1');
    expect(error.message).toBe(
      'Tool "mcp.fs.read" in plan "plan-1" was cancelled: cancelled by user. ' +
        "The plan's cancellation token was cancelled; start a new plan (or a new token) to run it again.",
    );
  });

  it('suggests a longer timeout when the reason is a deadline', () => {
    const error = new ToolCancelledError({ reason: 'timed out after 50 ms', toolName: 'echo' });
    expect(error.message).toBe('Tool "echo" was cancelled: timed out after 50 ms. Raise the timeout if the tool needs longer.');
  });

  it("does not blame the plan's token for one execution's deadline, and names the plan's own deadline", () => {
    const execution = new ToolCancelledError({ reason: "tool 'echo' timed out after 50 ms", toolName: 'echo', planId: 'p' });
    expect(execution.message).toBe(`Tool "echo" in plan "p" was cancelled: tool 'echo' timed out after 50 ms. Raise the timeout if the tool needs longer.`);
    const plan = new ToolCancelledError({ reason: 'plan timed out after 900 ms', toolName: 'echo', planId: 'p' });
    expect(plan.message).toBe(
      `Tool "echo" in plan "p" was cancelled: plan timed out after 900 ms. The plan's deadline passed; raise the plan's timeout if it needs longer.`,
    );
    expect(plan.message).not.toMatch(/new token/);
  });

  it('defaults the reason, keeps a given message and cause, and leaves unknown fields absent', () => {
    const cause = new Error('socket closed');
    const error = new ToolCancelledError({ message: 'stopped', cause });
    expect(error.reason).toBe('cancelled');
    expect(error.message).toBe('stopped');
    expect(error.cause).toBe(cause);
    expect('toolName' in error).toBe(false);
    expect('planId' in error).toBe(false);
    expect('cause' in new ToolCancelledError()).toBe(false);
    expect(new ToolCancelledError().message).toMatch(/^Tool execution was cancelled: cancelled\./);
  });

  it('recognises instances, also from another installed copy, by the Symbol.for brand', () => {
    class OtherCopyToolCancelledError extends Error {
      constructor() {
        super('from another copy');
        Object.defineProperty(this, Symbol.for('ca.error.ToolCancelledError'), { value: true });
      }
    }
    expect(ToolCancelledError.isInstance(new ToolCancelledError())).toBe(true);
    expect(ToolCancelledError.isInstance(new OtherCopyToolCancelledError())).toBe(true);
    expect(ToolCancelledError.isInstance({ [Symbol.for('ca.error.ToolCancelledError')]: true })).toBe(true);
  });

  it.each([new Error('x'), { code: 'TOOL_CANCELLED' }, { [Symbol.for('ca.error.ToolCancelledError')]: 'yes' }, null, undefined, 'TOOL_CANCELLED'])(
    'does not recognise %p',
    (value) => expect(ToolCancelledError.isInstance(value)).toBe(false),
  );
});

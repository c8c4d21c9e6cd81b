import { CaError } from '@ca/domain';
import { ToolCancelledError } from '@ca/tool-context';
import {
  ToolAccessDeniedError,
  ToolActivationError,
  ToolApprovalDeniedError,
  ToolCheckpointRequiredError,
  ToolDeactivationError,
  ToolExecutionError,
  ToolInvalidArgumentError,
  ToolLimitExceededError,
  ToolNotActivatedError,
  ToolNotFoundError,
  ToolPlanEndedError,
  ToolRegistrationError,
  ToolRuleError,
  ToolRuntimeError,
} from '../index';

const cause = new Error('root cause');

// Each class, one instance built from fields, its code and what its message must say.
const cases: readonly [ToolRuntimeError, string, RegExp][] = [
  [
    new ToolAccessDeniedError({ toolName: 't', planId: 'p', rule: 'read-only' }),
    'TOOL_ACCESS_DENIED',
    /^Tool 't' writes, but plan 'p' is read-only\. .*readOnly: false/,
  ],
  [
    new ToolAccessDeniedError({ toolName: 't', planId: 'p', rule: 'network' }),
    'TOOL_ACCESS_DENIED',
    /^Tool 't' reaches outside the plan .*plan 'p' denies the network\. .*network: 'allow'/,
  ],
  [
    new ToolCheckpointRequiredError({ toolName: 't', planId: 'p' }),
    'TOOL_CHECKPOINT_REQUIRED',
    /^Tool 't' is not checkpointable, but plan 'p' requires checkpoints\./,
  ],
  [new ToolNotActivatedError({ toolName: 't', planId: 'p' }), 'TOOL_NOT_ACTIVATED', /^Tool 't' is not active in plan 'p'\. Call runtime\.activate\('t', ctx\)/],
  [new ToolActivationError({ toolName: 't', planId: 'p', cause }), 'TOOL_ACTIVATION_FAILED', /^Tool 't' could not be activated in plan 'p': root cause\. /],
  [new ToolExecutionError({ toolName: 't', planId: 'p', cause }), 'TOOL_EXECUTION_FAILED', /^Tool 't' failed in plan 'p': root cause\. See the cause/],
  [
    new ToolDeactivationError({ toolName: 't', planId: 'p', cause }),
    'TOOL_DEACTIVATION_FAILED',
    /^Tool 't' failed to deactivate at the end of plan 'p': root cause\./,
  ],
  [
    new ToolNotFoundError({ toolName: 't', planId: 'p', suggestions: ['a.t'] }),
    'TOOL_NOT_FOUND',
    /^No source offers a tool named 't' \(plan 'p'\)\. Did you mean 'a\.t'\?/,
  ],
  [
    new ToolRegistrationError({ problem: 'not-provided', toolName: 't', sourceId: 's', planId: 'p', cause }),
    'TOOL_REGISTRATION_FAILED',
    /^Source 's' listed tool 't' but could not provide it: root cause\./,
  ],
  [new ToolPlanEndedError({ toolName: 't', planId: 'p' }), 'TOOL_PLAN_ENDED', /^Plan 'p' has ended, so tool 't' cannot run in it\./],
  [
    new ToolInvalidArgumentError({ argument: 'timeoutMs', expected: 'a positive number', received: -1, toolName: 't', planId: 'p' }),
    'TOOL_INVALID_ARGUMENT',
    /^Tool 't': timeoutMs must be a positive number; got number -1\./,
  ],
  [
    new ToolApprovalDeniedError({ toolName: 't', planId: 'p', denial: 'denied', decidedBy: 'alice' }),
    'TOOL_APPROVAL_DENIED',
    /^Tool 't' in plan 'p' was denied by alice\. The tool did not run\./,
  ],
  [
    new ToolApprovalDeniedError({ toolName: 't', planId: 'p', denial: 'rule', rule: 'r', reason: 'no' }),
    'TOOL_APPROVAL_DENIED',
    /^Tool 't' in plan 'p' is refused by rule 'r': no\. /,
  ],
  [
    new ToolApprovalDeniedError({ toolName: 't', planId: 'p', denial: 'no-handler', asked: 'it writes' }),
    'TOOL_APPROVAL_DENIED',
    /^Tool 't' in plan 'p' needs approval \(it writes\), but nobody can be asked/,
  ],
  [
    new ToolApprovalDeniedError({ toolName: 't', planId: 'p', denial: 'handler-failed', cause }),
    'TOOL_APPROVAL_DENIED',
    /^Tool 't' in plan 'p' needs approval, but the approval handler failed/,
  ],
  [
    new ToolApprovalDeniedError({ toolName: 't', planId: 'p', denial: 'timed-out', timeoutMs: 5 }),
    'TOOL_APPROVAL_DENIED',
    /no answer came within 5 ms \(approvalTimeoutMs\)/,
  ],
  [
    new ToolLimitExceededError({ toolName: 't', planId: 'p', limit: 'rate', scope: 'runtime', detail: '2 call(s) per 100 ms', waitedMs: 12 }),
    'TOOL_LIMIT_EXCEEDED',
    /^Tool 't' in plan 'p' was not called: it is at the rate limit of 2 call\(s\) per 100 ms for the runtime, and no turn came within 12 ms/,
  ],
  [
    Object.assign(new ToolRuleError({ rule: 'r', index: 0, field: 'tools', problem: 'invalid', detail: 'bad.' }), { planId: 'p' }),
    'TOOL_RULE_INVALID',
    /^Rule 'r' \(rules\[0\]\) is invalid at tools: bad\./,
  ],
];

describe('ToolRuntimeError hierarchy', () => {
  it.each(cases)('%p has its stable code, a message built from its fields, tool and plan', (error, code, message) => {
    expect(error.code).toBe(code);
    expect(error.name).toBe(error.constructor.name);
    expect(error.message).toMatch(message);
    expect(error.planId).toBe('p');
    expect(error).toBeInstanceOf(Error);
    expect(ToolRuntimeError.isInstance(error)).toBe(true);
    expect(CaError.isInstance(error)).toBe(true);
    expect((error.constructor as typeof ToolRuntimeError).isInstance(error)).toBe(true);
  });

  it("builds one sentence around a cause that ends with its own period: '…'off'. Fix the cause', not '..'", () => {
    const unavailable = new Error("Tool 'builtin.command.run' in plan 'p': the sandbox is required (command.sandbox). Set the sandbox to 'auto' or 'off'.");
    const messages = [
      new ToolActivationError({ toolName: 't', planId: 'p', cause: unavailable }).message,
      new ToolExecutionError({ toolName: 't', planId: 'p', cause: unavailable }).message,
      new ToolDeactivationError({ toolName: 't', planId: 'p', cause: unavailable }).message,
      new ToolCancelledError({ toolName: 't', planId: 'p', reason: 'the person pressed Ctrl-C.' }).message,
    ];
    expect(messages[0]).toMatch(/'auto' or 'off'\. Fix the cause and execute it again/);
    for (const message of messages) expect(message).not.toMatch(/\.\./);
  });

  it('keeps the cause where one is given, and omits it where none is', () => {
    expect(new ToolActivationError({ toolName: 't', planId: 'p', cause }).cause).toBe(cause);
    expect('cause' in new ToolNotFoundError({ toolName: 't' })).toBe(false);
  });

  it('guards tell the classes apart and refuse look-alikes', () => {
    const denied = new ToolAccessDeniedError({ toolName: 't', planId: 'p', rule: 'read-only' });
    expect(ToolExecutionError.isInstance(denied)).toBe(false);
    expect(ToolRuntimeError.isInstance({ code: 'TOOL_ACCESS_DENIED', message: 'x' })).toBe(false);
    expect(ToolRuntimeError.isInstance(null)).toBe(false);
    expect(ToolRuntimeError.isInstance('TOOL_ACCESS_DENIED')).toBe(false);
  });

  it('guards recognise an error from another copy of the package by its Symbol.for brand', () => {
    // What a second installed copy produces: different classes, same global symbols.
    class ForeignError extends Error {
      constructor() {
        super('from another copy');
        Object.defineProperty(this, Symbol.for('ca.error.ToolRuntimeError'), { value: true });
        Object.defineProperty(this, Symbol.for('ca.error.ToolAccessDeniedError'), { value: true });
      }
    }
    const foreign = new ForeignError();
    expect(foreign instanceof ToolAccessDeniedError).toBe(false);
    expect(ToolAccessDeniedError.isInstance(foreign)).toBe(true);
    expect(ToolRuntimeError.isInstance(foreign)).toBe(true);
    expect(ToolActivationError.isInstance(foreign)).toBe(false);
  });

  it('describes each way a tool can fail to run, and each registration problem', () => {
    expect(new ToolExecutionError({ toolName: 't', planId: 'p', failure: 'invalid-result', returned: 42 }).message).toMatch(
      /returned number 42 instead of a ToolResult/,
    );
    expect(new ToolExecutionError({ toolName: 't', planId: 'p', failure: 'reported', cause: 'plain text' }).message).toBe(
      "Tool 't' failed in plan 'p': plain text.",
    );
    expect(new ToolExecutionError({ toolName: 't', planId: 'p', failure: 'unserialisable-output', cause }).message).toMatch(
      /cannot be serialised to JSON \(root cause\)/,
    );
    const duplicate = new ToolRegistrationError({ problem: 'duplicate', duplicates: [{ toolName: 'x', sourceIds: ['a', 'b'] }] });
    expect(duplicate.message).toMatch(/'x' \(from 'a' and 'b'\)/);
    expect(duplicate.duplicates).toEqual([{ toolName: 'x', sourceIds: ['a', 'b'] }]);
    expect(new ToolRegistrationError({ problem: 'unavailable', toolName: 'x', reason: 'its schema is bad.' }).message).toBe(
      "Tool 'x' is unavailable: its schema is bad.",
    );
    expect(new ToolNotFoundError({ toolName: 'x', sourceId: 'builtin' }).message).toMatch(/^Source 'builtin' has no tool named 'x'\./);
  });
});

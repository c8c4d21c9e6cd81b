import {
  ToolAccessDeniedError,
  ToolActivationError,
  ToolCheckpointRequiredError,
  ToolDeactivationError,
  ToolExecutionError,
  ToolInvalidArgumentError,
  ToolNotActivatedError,
  ToolNotFoundError,
  ToolPlanEndedError,
  ToolRegistrationError,
  ToolRuntimeError,
} from './index';

const classes = [
  [ToolAccessDeniedError, 'TOOL_ACCESS_DENIED'],
  [ToolCheckpointRequiredError, 'TOOL_CHECKPOINT_REQUIRED'],
  [ToolNotActivatedError, 'TOOL_NOT_ACTIVATED'],
  [ToolActivationError, 'TOOL_ACTIVATION_FAILED'],
  [ToolExecutionError, 'TOOL_EXECUTION_FAILED'],
  [ToolDeactivationError, 'TOOL_DEACTIVATION_FAILED'],
  [ToolNotFoundError, 'TOOL_NOT_FOUND'],
  [ToolRegistrationError, 'TOOL_REGISTRATION_FAILED'],
  [ToolPlanEndedError, 'TOOL_PLAN_ENDED'],
  [ToolInvalidArgumentError, 'TOOL_INVALID_ARGUMENT'],
] as const;

describe('ToolRuntimeError hierarchy', () => {
  it.each(classes)('%p has its stable code, name, tool, plan and cause', (ErrorClass, code) => {
    const cause = new Error('root cause');
    const error = new ErrorClass({ message: 'what happened, and what to do', toolName: 't', planId: 'p', cause });
    expect(error.code).toBe(code);
    expect(error.name).toBe(ErrorClass.name);
    expect(error.toolName).toBe('t');
    expect(error.planId).toBe('p');
    expect(error.cause).toBe(cause);
    expect(error).toBeInstanceOf(Error);
    expect(ErrorClass.isInstance(error)).toBe(true);
    expect(ToolRuntimeError.isInstance(error)).toBe(true);
  });

  it('guards tell the classes apart and refuse look-alikes', () => {
    const denied = new ToolAccessDeniedError({ message: 'x' });
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

  it('omits the cause when none is given', () => {
    expect('cause' in new ToolNotFoundError({ message: 'x' })).toBe(false);
  });
});

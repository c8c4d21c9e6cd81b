import { ContextValidationError } from './context-validation-error';
import { ToolCancelledError } from './tool-cancelled-error';

describe('ContextValidationError', () => {
  it('is a TypeError with a stable code, the field and the plan in its message', () => {
    const error = new ContextValidationError({ field: 'resources[0].uri', planId: 'plan-7', message: 'use a file: URI.' });
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ContextValidationError');
    expect(error.code).toBe('CONTEXT_INVALID');
    expect(error.field).toBe('resources[0].uri');
    expect(error.planId).toBe('plan-7');
    expect(error.message).toBe('Invalid resources[0].uri (plan "plan-7"): use a file: URI.');
  });

  it('leaves out the plan when there is none and keeps the cause', () => {
    const cause = new Error('inner');
    const error = new ContextValidationError({ field: 'timeoutMs', message: 'expected a number.', cause });
    expect(error.message).toBe('Invalid timeoutMs: expected a number.');
    expect('planId' in error).toBe(false);
    expect(error.cause).toBe(cause);
  });

  it('recognises instances, also from another installed copy, and nothing else', () => {
    class OtherCopyContextValidationError extends TypeError {
      constructor() {
        super('from another copy');
        Object.defineProperty(this, Symbol.for('ca.error.ContextValidationError'), { value: true });
      }
    }
    expect(ContextValidationError.isInstance(new ContextValidationError({ field: 'planId', message: 'x' }))).toBe(true);
    expect(ContextValidationError.isInstance(new OtherCopyContextValidationError())).toBe(true);
    expect(ContextValidationError.isInstance(new TypeError('x'))).toBe(false);
    expect(ContextValidationError.isInstance(new ToolCancelledError())).toBe(false);
    expect(ToolCancelledError.isInstance(new ContextValidationError({ field: 'planId', message: 'x' }))).toBe(false);
    expect(ContextValidationError.isInstance(undefined)).toBe(false);
  });
});

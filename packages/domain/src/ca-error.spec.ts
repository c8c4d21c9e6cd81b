import { CaError, hasBrand, type CaErrorOptions } from './ca-error';

class FamilyError extends CaError {
  constructor(code: string, subject: string, options: CaErrorOptions = {}) {
    super(code, `Something failed with ${subject}. Try again.`, options);
  }
}

class MemberError extends FamilyError {
  declare readonly code: 'MEMBER_FAILED';
  readonly subject: string;
  constructor(subject: string, options: CaErrorOptions = {}) {
    super('MEMBER_FAILED', subject, options);
    this.subject = subject;
  }
}

class OtherError extends CaError {
  constructor() {
    super('OTHER', 'other');
  }
}

describe('CaError', () => {
  it('carries code, name from the class, tool, plan and cause', () => {
    const cause = new Error('root');
    const error = new MemberError('x', { toolName: 't', planId: 'p', cause });
    expect(error.code).toBe('MEMBER_FAILED');
    expect(error.name).toBe('MemberError');
    expect(error.message).toBe('Something failed with x. Try again.');
    expect(error.toolName).toBe('t');
    expect(error.planId).toBe('p');
    expect(error.cause).toBe(cause);
    expect(error).toBeInstanceOf(Error);
  });

  it('leaves cause, tool and plan out when not given', () => {
    const error = new MemberError('x');
    expect('cause' in error).toBe(false);
    expect('toolName' in error).toBe(false);
    expect('planId' in error).toBe(false);
  });

  it('gives every subclass a working isInstance without declaring one', () => {
    const member = new MemberError('x');
    expect(MemberError.isInstance(member)).toBe(true);
    expect(FamilyError.isInstance(member)).toBe(true);
    expect(CaError.isInstance(member)).toBe(true);
    expect(OtherError.isInstance(member)).toBe(false);
    expect(MemberError.isInstance(new FamilyError('F', 'y'))).toBe(false);
    expect(CaError.isInstance(new OtherError())).toBe(true);
  });

  it('recognises an error of another installed copy by its Symbol.for brands', () => {
    class ForeignMember extends Error {}
    Object.defineProperty(ForeignMember.prototype, Symbol.for('ca.error.MemberError'), { value: true });
    Object.defineProperty(ForeignMember.prototype, Symbol.for('ca.error.FamilyError'), { value: true });
    const foreign = new ForeignMember('from another copy');
    expect(foreign instanceof MemberError).toBe(false);
    expect(MemberError.isInstance(foreign)).toBe(true);
    expect(FamilyError.isInstance(foreign)).toBe(true);
    expect(OtherError.isInstance(foreign)).toBe(false);
  });

  it('brands with the symbols earlier releases used, so their guards recognise new errors', () => {
    const error = new MemberError('x');
    expect((error as unknown as Record<symbol, unknown>)[Symbol.for('ca.error.MemberError')]).toBe(true);
    expect((error as unknown as Record<symbol, unknown>)[Symbol.for('ca.error.FamilyError')]).toBe(true);
    expect((error as unknown as Record<symbol, unknown>)[Symbol.for('ca.error.CaError')]).toBe(true);
    expect(Object.getOwnPropertySymbols(error)).toEqual([]);
  });

  it('refuses look-alikes and hostile values without throwing', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
      },
    );
    expect(CaError.isInstance(hostile)).toBe(false);
    expect(CaError.isInstance({ code: 'MEMBER_FAILED', name: 'MemberError' })).toBe(false);
    expect(CaError.isInstance(null)).toBe(false);
    expect(CaError.isInstance('MemberError')).toBe(false);
    expect(hasBrand(hostile, Symbol.for('ca.error.CaError'))).toBe(false);
  });

  it('serialises to its identifying fields', () => {
    const error = new MemberError('x', { toolName: 't', cause: new Error('secret detail') });
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: 'MemberError',
      code: 'MEMBER_FAILED',
      message: 'Something failed with x. Try again.',
      toolName: 't',
    });
  });
});

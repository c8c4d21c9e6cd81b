import { CaError } from '@ca/domain';
import { SkillError } from './skill-error';

describe('SkillError', () => {
  it('carries its code, details and ES2022 cause', () => {
    const cause = new Error('EACCES');
    const error = new SkillError({
      code: 'SKILL_FILE_READ_FAILED',
      message: "Tool 'skill.a' could not read 'x.md'.",
      toolName: 'skill.a',
      planId: 'plan-1',
      skillPath: '/skills/a',
      requestedPath: 'x.md',
      cause,
    });
    expect(error).toBeInstanceOf(Error);
    expect(CaError.isInstance(error)).toBe(true);
    expect(error.toJSON()).toEqual({
      name: 'SkillError',
      code: 'SKILL_FILE_READ_FAILED',
      message: "Tool 'skill.a' could not read 'x.md'.",
      toolName: 'skill.a',
      planId: 'plan-1',
    });
    expect(error).toMatchObject({
      name: 'SkillError',
      code: 'SKILL_FILE_READ_FAILED',
      toolName: 'skill.a',
      planId: 'plan-1',
      skillPath: '/skills/a',
      requestedPath: 'x.md',
      message: "Tool 'skill.a' could not read 'x.md'.",
    });
    expect(error.cause).toBe(cause);
    expect('diagnosticCode' in error).toBe(false);
    expect('cause' in new SkillError({ code: 'SKILL_NOT_FOUND', message: 'none' })).toBe(false);
  });

  it('is recognised by its Symbol.for brand, also from another copy of the package', () => {
    const foreign = Object.assign(new Error('copy'), { code: 'SKILL_NOT_FOUND' });
    Object.defineProperty(foreign, Symbol.for('ca.error.SkillError'), { value: true });
    expect(SkillError.isInstance(foreign)).toBe(true);
    expect(SkillError.isInstance(new SkillError({ code: 'SKILL_INVALID', message: 'x' }))).toBe(true);
    expect(SkillError.isInstance(Object.assign(new Error('look-alike'), { code: 'SKILL_INVALID', name: 'SkillError' }))).toBe(false);
    expect(SkillError.isInstance(null)).toBe(false);
    expect(SkillError.isInstance('SkillError')).toBe(false);
  });
});

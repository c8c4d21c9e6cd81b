import { CaError } from '@ca/domain';
import { SkillError } from './skill-error';

describe('SkillError', () => {
  it('carries its code, details and ES2022 cause; its message is built from them', () => {
    const cause = new Error('EACCES');
    const error = new SkillError({
      code: 'SKILL_FILE_READ_FAILED',
      problem: "could not read 'x.md' (EACCES)",
      remedy: 'Check its permissions.',
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
      message: "Tool 'skill.a' in plan 'plan-1' could not read 'x.md' (EACCES). Check its permissions.",
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
      message: "Tool 'skill.a' in plan 'plan-1' could not read 'x.md' (EACCES). Check its permissions.",
    });
    expect(error.cause).toBe(cause);
    expect('diagnosticCode' in error).toBe(false);
    expect('cause' in new SkillError({ code: 'SKILL_NOT_FOUND', problem: 'none' })).toBe(false);
  });

  it('names the skill, or the adapter, when there is no tool; ends the problem with one period whatever it ends with', () => {
    expect(new SkillError({ code: 'SKILL_INVALID', skillPath: '/skills/b', problem: 'was skipped...' }).message).toBe("The skill at '/skills/b' was skipped.");
    expect(new SkillError({ code: 'SKILL_INVALID_SETTINGS', problem: 'refused its settings: roots must be a list' }).message).toBe(
      'The Agent Skills adapter refused its settings: roots must be a list.',
    );
    // A script's output ends up in the problem: a long run of dots must cost linear time, not freeze the process.
    const dots = `${'.'.repeat(200_000)}x`;
    expect(new SkillError({ code: 'SKILL_SCRIPT_FAILED', toolName: 't', problem: `exited with status 1: ${dots}` }).message).toBe(
      `Tool 't' exited with status 1: ${dots}.`,
    );
  });

  it('is recognised by its Symbol.for brand, also from another copy of the package', () => {
    const foreign = Object.assign(new Error('copy'), { code: 'SKILL_NOT_FOUND' });
    Object.defineProperty(foreign, Symbol.for('ca.error.SkillError'), { value: true });
    expect(SkillError.isInstance(foreign)).toBe(true);
    expect(SkillError.isInstance(new SkillError({ code: 'SKILL_INVALID', problem: 'x' }))).toBe(true);
    expect(SkillError.isInstance(Object.assign(new Error('look-alike'), { code: 'SKILL_INVALID', name: 'SkillError' }))).toBe(false);
    expect(SkillError.isInstance(null)).toBe(false);
    expect(SkillError.isInstance('SkillError')).toBe(false);
  });
});

import { ContextValidationError } from './context-validation-error';
import { createExecutionContext } from './execution-context';
import { normalizePlanPolicy } from './plan-policy';

describe('PlanPolicy network', () => {
  it("defaults to 'allow', so plans written before the field keep their network", () => {
    expect(normalizePlanPolicy(undefined, 'p').network).toBe('allow');
    expect(normalizePlanPolicy({ readOnly: true }, 'p')).toEqual({ readOnly: true, requireCheckpoint: false, network: 'allow' });
  });

  it("keeps 'deny' and 'allow', frozen", () => {
    const policy = createExecutionContext({ planId: 'offline', policy: { network: 'deny' } }).policy;
    expect(policy).toEqual({ readOnly: false, requireCheckpoint: false, network: 'deny' });
    expect(Object.isFrozen(policy)).toBe(true);
    expect(normalizePlanPolicy({ network: 'allow', readOnly: true }, 'p').network).toBe('allow');
  });

  it.each([
    [false, /expected 'allow' or 'deny' .*got boolean false/],
    ['DENY', /expected 'allow' or 'deny' .*got the string "DENY"/],
    ['off', /expected 'allow' or 'deny'/],
    [null, /expected 'allow' or 'deny' .*got null/],
  ])('refuses network %p with the field and the plan named', (network, message) => {
    let thrown: unknown;
    try {
      createExecutionContext({ planId: 'plan-net', policy: { network } as never });
    } catch (error) {
      thrown = error;
    }
    expect(ContextValidationError.isInstance(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: 'CONTEXT_INVALID', field: 'policy.network', planId: 'plan-net' });
    expect((thrown as Error).message).toMatch(message);
  });

  it('refuses a misspelt field instead of leaving the network on', () => {
    expect(() => normalizePlanPolicy({ networks: 'deny' }, 'p')).toThrow(
      /unknown policy field; a policy has only readOnly, requireCheckpoint, network and approval/,
    );
  });
});

describe('PlanPolicy approval', () => {
  it('keeps what asks, frozen and without duplicates; leaves the field out when nothing asks', () => {
    const policy = normalizePlanPolicy({ approval: { capabilities: ['writes', 'writes', 'openWorld'], tools: ['mcp.github.*'], always: false } }, 'p');
    expect(policy.approval).toEqual({ capabilities: ['writes', 'openWorld'], tools: ['mcp.github.*'] });
    expect(Object.isFrozen(policy.approval)).toBe(true);
    expect(Object.isFrozen(policy.approval?.capabilities)).toBe(true);
    expect(normalizePlanPolicy({ approval: { always: true } }, 'p').approval).toEqual({ always: true });
    for (const nothing of [{}, { always: false }, { capabilities: [], tools: [] }]) {
      expect(normalizePlanPolicy({ approval: nothing }, 'p')).not.toHaveProperty('approval');
    }
    expect(normalizePlanPolicy(undefined, 'p')).not.toHaveProperty('approval');
  });

  it.each([
    ['yes', 'policy.approval', /expected an object like/],
    [{ alwyas: true }, 'policy.approval.alwyas', /unknown approval field/],
    [{ always: 'yes' }, 'policy.approval.always', /expected true or false/],
    [{ capabilities: 'writes' }, 'policy.approval.capabilities', /expected a list/],
    [{ capabilities: ['write'] }, 'policy.approval.capabilities[0]', /expected 'writes', 'destructive' or 'openWorld', got the string "write"/],
    [{ tools: ['mcp github'] }, 'policy.approval.tools[0]', /expected a tool-name pattern/],
    [{ tools: [''] }, 'policy.approval.tools[0]', /expected a tool-name pattern/],
  ])('refuses approval %p at %s', (approval, field, message) => {
    let thrown: unknown;
    try {
      createExecutionContext({ planId: 'plan-a', policy: { approval } as never });
    } catch (error) {
      thrown = error;
    }
    expect(ContextValidationError.isInstance(thrown)).toBe(true);
    expect(thrown).toMatchObject({ field, planId: 'plan-a' });
    expect((thrown as Error).message).toMatch(message);
  });
});

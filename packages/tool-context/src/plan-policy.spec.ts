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
    expect(() => normalizePlanPolicy({ networks: 'deny' }, 'p')).toThrow(/unknown policy field; a policy has only readOnly, requireCheckpoint and network/);
  });
});

import { planAllowsNetwork, sandboxWritesForPlan } from './plan-sandbox';

describe('sandboxWritesForPlan and planAllowsNetwork: a plan as the sandbox sees it', () => {
  it.each([
    [{ readOnly: true, requireCheckpoint: false }, {}, 'none'],
    [{ readOnly: true, requireCheckpoint: true }, { overlay: true }, 'none'],
    [{ readOnly: false, requireCheckpoint: true }, { overlay: true }, 'overlay'],
    [{ readOnly: false, requireCheckpoint: true }, {}, 'none'],
    [{ readOnly: false, requireCheckpoint: false }, { overlay: true }, 'in-place'],
    [{ readOnly: false, requireCheckpoint: false }, {}, 'in-place'],
  ] as const)('%j with %j writes %s', (policy, options, writes) => {
    expect(sandboxWritesForPlan(policy, options)).toBe(writes);
  });

  it("allows the network unless the policy says 'deny'", () => {
    expect(planAllowsNetwork({})).toBe(true);
    expect(planAllowsNetwork({ network: 'allow' })).toBe(true);
    expect(planAllowsNetwork({ network: 'deny' })).toBe(false);
  });
});

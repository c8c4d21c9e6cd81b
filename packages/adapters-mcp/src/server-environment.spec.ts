import { MINIMAL_ENVIRONMENT_VARIABLES } from '@ca/sandbox';
import { DEFAULT_INHERITED_ENVIRONMENT } from './server-environment';

describe('DEFAULT_INHERITED_ENVIRONMENT', () => {
  it('is the minimal environment of the process runner, without SHELL or anything secret', () => {
    expect(DEFAULT_INHERITED_ENVIRONMENT).toBe(MINIMAL_ENVIRONMENT_VARIABLES);
    expect(DEFAULT_INHERITED_ENVIRONMENT).not.toContain('SHELL');
    expect(DEFAULT_INHERITED_ENVIRONMENT.filter((name) => /SECRET|TOKEN|KEY|PASSWORD|AWS/.test(name))).toEqual([]);
  });
});

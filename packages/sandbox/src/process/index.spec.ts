import * as mainEntry from '../index';
import * as processEntry from './index';

describe('the process runner in the public API of @ca/sandbox', () => {
  it('exports exactly the documented names', () => {
    expect(Object.keys(processEntry).sort()).toEqual([
      'MINIMAL_ENVIRONMENT_VARIABLES',
      'PROCESS_GROUPS_SUPPORTED',
      'ProcessError',
      'ProcessLaunchError',
      'ProcessOptionsError',
      'ProcessStartError',
      'buildProcessEnvironment',
      'runProcess',
      'signalProcessGroup',
      'startProcess',
    ]);
  });

  it('puts every name of the runner on the main entry, as the same values', () => {
    for (const name of Object.keys(processEntry))
      expect([name, (mainEntry as Record<string, unknown>)[name]]).toEqual([name, (processEntry as Record<string, unknown>)[name]]);
    expect(mainEntry.signalProcessGroup).toBe(processEntry.signalProcessGroup);
    expect(mainEntry.PROCESS_GROUPS_SUPPORTED).toBe(processEntry.PROCESS_GROUPS_SUPPORTED);
  });
});

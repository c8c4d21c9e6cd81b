import * as mainEntry from '../index';
import * as processEntry from './index';

describe('@ca/tool-lifecycle/process public API', () => {
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

  it('keeps signalProcessGroup and PROCESS_GROUPS_SUPPORTED on the main entry, as the same values', () => {
    expect(mainEntry.signalProcessGroup).toBe(processEntry.signalProcessGroup);
    expect(mainEntry.PROCESS_GROUPS_SUPPORTED).toBe(processEntry.PROCESS_GROUPS_SUPPORTED);
    expect(Object.keys(mainEntry)).not.toContain('runProcess');
  });
});

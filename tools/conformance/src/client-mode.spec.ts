// How a scenario's checks are judged: a WARNING (a SHOULD not met) fails a
// scenario as a FAILURE does, in client and server mode alike.
import { failedChecks, type ConformanceCheck } from './client-mode';

function check(id: string, status: ConformanceCheck['status'], errorMessage?: string): ConformanceCheck {
  return { id, name: id, description: `${id} described`, status, ...(errorMessage === undefined ? {} : { errorMessage }) };
}

describe('failedChecks', () => {
  it('counts FAILURE and WARNING, one line each, and nothing else', () => {
    const checks = [
      check('ok', 'SUCCESS'),
      check('cimd', 'WARNING', 'Client SHOULD use URL-based client ID'),
      check('broken', 'FAILURE'),
      check('note', 'INFO'),
      check('not-run', 'SKIPPED'),
    ];
    expect(failedChecks(checks)).toEqual(['WARNING cimd: cimd described — Client SHOULD use URL-based client ID', 'FAILURE broken: broken described']);
  });

  it('passes checks that are all SUCCESS, INFO or SKIPPED', () => {
    expect(failedChecks([check('ok', 'SUCCESS'), check('note', 'INFO'), check('not-run', 'SKIPPED')])).toEqual([]);
  });
});

import { describeProgress, formatSeconds } from './plan-runner';

describe('progress lines', () => {
  it('show the count, the total when known, the message and the time since the step started', () => {
    expect(describeProgress({ progress: 3, total: 10, message: 'copying' }, 4_230)).toBe('3/10 copying (4.2 s)');
    expect(describeProgress({ progress: 7 }, 850)).toBe('7 (850 ms)');
    expect(formatSeconds(999)).toBe('999 ms');
    expect(formatSeconds(61_000)).toBe('61.0 s');
  });

  it("keep a server's control characters and terminal escapes out of the output, and cut long messages", () => {
    const line = describeProgress({ progress: 1, total: 2, message: 'half\u001b[2J\u001b]0;owned\u0007 way\nthere\r' }, 10);
    // eslint-disable-next-line no-control-regex
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(line).toBe('1/2 half [2J ]0;owned way there (10 ms)');
    expect(describeProgress({ progress: 1, message: 'x'.repeat(10_000) }, 10).length).toBeLessThan(220);
  });
});

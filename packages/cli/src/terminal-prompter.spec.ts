import { PassThrough } from 'node:stream';
import { normalizeCapability } from '@ca/domain';
import type { ApprovalRequest } from '@ca/tool-lifecycle';
import { TerminalPrompter } from './terminal-prompter';
import { terminalSafe } from './terminal-text';

function terminal() {
  const input = new PassThrough();
  let shown = '';
  const prompter = new TerminalPrompter({ input, write: (text) => void (shown += text), who: 'ada (terminal)' });
  return { prompter, type: (line: string) => void input.write(`${line}\n`), shown: () => shown, end: () => input.end() };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

function request(id: string, args: unknown = { path: 'a' }): ApprovalRequest {
  return {
    id,
    planId: 'plan-1',
    executionId: `exec-${id}`,
    toolName: 'files.write',
    description: 'Writes a file.\nSecond line is not shown.',
    source: 'custom',
    capability: normalizeCapability({ writes: true, openWorld: false }),
    arguments: args,
    fingerprint: 'f'.repeat(43),
    reason: { source: 'policy', match: 'writes', text: 'the plan asks before tools that write' },
  };
}

const open = () => ({ signal: new AbortController().signal });

describe('TerminalPrompter', () => {
  it('asks one question at a time, in order, and gives each the line typed for it', async () => {
    const { prompter, type, shown } = terminal();
    const first = prompter.ask('first? ');
    const second = prompter.ask('second? ');
    await until(() => shown().includes('first? '));
    expect(shown()).not.toContain('second? ');
    type('  one  ');
    expect(await first).toBe('one');
    await until(() => shown().includes('second? '));
    type('two');
    expect(await second).toBe('two');
    prompter.close();
  });

  it('withdraws a question whose signal aborts, shown or waiting, and moves on', async () => {
    const { prompter, type, shown } = terminal();
    const shownController = new AbortController();
    const waitingController = new AbortController();
    const first = prompter.ask('first? ', shownController.signal);
    const second = prompter.ask('second? ', waitingController.signal);
    const third = prompter.ask('third? ');
    await until(() => shown().includes('first? '));
    waitingController.abort();
    expect(await second).toBeUndefined();
    shownController.abort();
    expect(await first).toBeUndefined();
    expect(shown()).toContain('(withdrawn)\n');
    await until(() => shown().includes('third? '));
    expect(shown()).not.toContain('second? ');
    type('3');
    expect(await third).toBe('3');
    prompter.close();
  });

  it('gives no answer when the input ends, and none after close', async () => {
    const { prompter, end } = terminal();
    const asked = prompter.ask('anyone? ');
    end();
    expect(await asked).toBeUndefined();
    prompter.close();
    expect(await prompter.ask('still? ')).toBeUndefined();
  });

  it.each([
    ['y', { decision: 'approve', scope: 'once' }],
    ['YES', { decision: 'approve', scope: 'once' }],
    ['t', { decision: 'approve', scope: 'tool' }],
    ['c', { decision: 'approve', scope: 'call' }],
    ['n', { decision: 'deny' }],
    ['no   because   reasons', { decision: 'deny', reason: 'because   reasons' }],
  ])('reads the answer %p as %j, naming who answered', async (line, expected) => {
    const { prompter, type, shown } = terminal();
    const answer = prompter.requestApproval(request('1'), open());
    await until(() => shown().includes('Approve?'));
    type(line);
    expect(await answer).toEqual({ ...expected, decidedBy: 'ada (terminal)' });
    prompter.close();
  });

  it('asks again after an answer that is not one, and denies after three', async () => {
    const { prompter, type, shown } = terminal();
    const answer = prompter.requestApproval(request('1'), open());
    const wrongs = ['sure', 'constructor', 'toString'];
    for (const [index, wrong] of wrongs.entries()) {
      await until(() => shown().split('Approve?').length - 1 > index);
      type(wrong);
    }
    expect(await answer).toEqual({ decision: 'deny', reason: 'no answer among y, t, c and n after 3 tries', decidedBy: 'ada (terminal)' });
    expect(shown()).toContain("'sure' is not an answer. Approve?");
    prompter.close();
  });

  it('shows the request without letting its text act on the terminal', async () => {
    const { prompter, type, shown } = terminal();
    const answer = prompter.requestApproval(request('1', { path: 'a\u001b]0;pwned\u0007', note: '\u202eevil' }), open());
    await until(() => shown().includes('Approve?'));
    expect(shown()).toContain('Approval needed — request 1 of plan plan-1: the plan asks before tools that write');
    expect(shown()).toContain('tool       files.write (custom): writes, may destroy data, cannot be undone');
    expect(shown()).toContain('about      Writes a file.\n');
    expect(shown()).toContain('arguments  {"path":"a\\u001b]0;pwned\\u0007","note":"\\u{202e}evil"}');
    // eslint-disable-next-line no-control-regex
    expect(shown()).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202e]/);
    type('n');
    await answer;
    prompter.close();
  });

  it('terminalSafe cuts long text and counts the rest', () => {
    expect(terminalSafe('x'.repeat(2_010))).toBe(`${'x'.repeat(2_000)}… (10 more characters)`);
    expect(terminalSafe('tab\there')).toBe('tab\\u{9}here');
  });
});

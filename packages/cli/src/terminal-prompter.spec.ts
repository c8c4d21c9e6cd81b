import { PassThrough } from 'node:stream';
import { normalizeCapability } from '@ca/domain';
import { approvalThroughInteraction, type ApprovalRequest, type InteractionContext, type InteractionRequest } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { TerminalPrompter } from './terminal-prompter';
import { terminalLines, terminalSafe } from './terminal-text';

function terminal(options: { hint?: string; input?: boolean } = {}) {
  const input = new PassThrough();
  let shown = '';
  const logger = new RecordingLogger();
  const prompter = new TerminalPrompter({
    input: options.input === false ? undefined : input,
    write: (text) => void (shown += text),
    logger,
    ...(options.hint === undefined ? {} : { approvalHint: () => options.hint }),
  });
  const approvals = approvalThroughInteraction(prompter, { decidedBy: 'ada (terminal)' });
  return { prompter, approvals, logger, type: (line: string) => void input.write(`${line}\n`), shown: () => shown, end: () => input.end() };
}

async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1_000 && !condition(); turn++) await new Promise((resolve) => setTimeout(resolve, 2));
  if (!condition()) throw new Error('the condition never held');
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

const form: InteractionRequest = {
  kind: 'form',
  message: 'Which city?\nOne line more.',
  schema: { type: 'object', properties: { city: { type: 'string', title: 'City' }, days: { type: 'integer', title: 'Days', default: 2 } }, required: ['city'] },
};
const mcp = (signal = new AbortController().signal): InteractionContext => ({ source: 'mcp', origin: 'weather', toolName: 'mcp.weather.forecast', signal });

describe('TerminalPrompter: approvals', () => {
  it.each([
    ['y', { decision: 'approve', scope: 'once' }],
    ['YES', { decision: 'approve', scope: 'once' }],
    ['t', { decision: 'approve', scope: 'tool' }],
    ['c', { decision: 'approve', scope: 'call' }],
    ['n', { decision: 'deny' }],
    ['no   because   reasons', { decision: 'deny', reason: 'because   reasons' }],
  ])('reads the answer %p as %j, naming who answered', async (line, expected) => {
    const { approvals, prompter, type, shown } = terminal();
    const answer = approvals.requestApproval(request('1'), open());
    await until(() => shown().includes('Approve?'));
    type(line);
    expect(await answer).toEqual({ ...expected, decidedBy: 'ada (terminal)' });
    prompter.close();
  });

  it('asks again after an answer that is not one, and denies after three', async () => {
    const { approvals, prompter, type, shown } = terminal();
    const answer = approvals.requestApproval(request('1'), open());
    const wrongs = ['sure', 'constructor', 'toString'];
    for (const [index, wrong] of wrongs.entries()) {
      await until(() => shown().split('Approve?').length - 1 > index);
      type(wrong);
    }
    expect(await answer).toEqual({ decision: 'deny', reason: 'no answer among y, t, c and n after 3 tries', decidedBy: 'ada (terminal)' });
    expect(shown()).toContain("'sure' is not an answer. Approve?");
    prompter.close();
  });

  it('shows the request, and the hint, without letting their text act on the terminal', async () => {
    const { approvals, prompter, type, shown } = terminal({ hint: '(or from another terminal: agents plan approve plan-1 1)' });
    const answer = approvals.requestApproval(request('1', { path: 'a\u001b]0;pwned\u0007', note: '\u202eevil' }), open());
    await until(() => shown().includes('Approve?'));
    expect(shown()).toContain('Approval needed — request 1 of plan plan-1: the plan asks before tools that write');
    expect(shown()).toContain('tool       files.write (custom): writes, may destroy data, cannot be undone');
    expect(shown()).toContain('about      Writes a file.\n');
    expect(shown()).toContain('arguments  {"path":"a\\u001b]0;pwned\\u0007","note":"\\u{202e}evil"}');
    expect(shown()).toContain('  (or from another terminal: agents plan approve plan-1 1)\n');
    // eslint-disable-next-line no-control-regex
    expect(shown()).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202e]/);
    type('n');
    await answer;
    prompter.close();
  });

  it('a line typed while nothing is asked approves nothing', async () => {
    const { approvals, prompter, type, shown } = terminal();
    const first = approvals.requestApproval(request('1'), open());
    await until(() => shown().includes('Approve?'));
    type('y');
    expect(await first).toMatchObject({ decision: 'approve' });
    // A second 'y', typed before the next request is asked, is not its answer.
    type('y');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = approvals.requestApproval(request('2'), open());
    await until(() => shown().split('Approve?').length === 3);
    type('n not this one');
    expect(await second).toEqual({ decision: 'deny', reason: 'not this one', decidedBy: 'ada (terminal)' });
    prompter.close();
  });

  it('the end of the input denies, saying so; after close nothing is asked', async () => {
    const { approvals, prompter, end, shown } = terminal();
    const asked = approvals.requestApproval(request('1'), open());
    await until(() => shown().includes('Approve?'));
    end();
    expect(await asked).toEqual({ decision: 'deny', reason: 'the terminal closed before an answer', decidedBy: 'ada (terminal)' });
    prompter.close();
    const before = shown();
    expect(await approvals.requestApproval(request('2'), open())).toMatchObject({ decision: 'deny' });
    expect(shown()).toBe(before);
  });
});

describe('TerminalPrompter: one channel for every question', () => {
  it('asks one interaction at a time: an approval asked while a form is answered waits for the whole form', async () => {
    const { approvals, prompter, type, shown } = terminal();
    const answered = prompter.interact(form, mcp());
    await until(() => shown().includes('Answer it?'));
    expect(shown()).toContain("MCP server 'weather' (tool 'mcp.weather.forecast') asks: Which city?\nOne line more.\n");
    const approval = approvals.requestApproval(request('1'), open());
    type('y');
    await until(() => shown().includes('City: '));
    // Between two fields of the form, the approval is not shown.
    expect(shown()).not.toContain('Approve?');
    type('Lyon');
    await until(() => shown().includes('Days (optional) [2]: '));
    type('');
    expect(await answered).toEqual({ action: 'accept', content: { city: 'Lyon', days: 2 } });
    await until(() => shown().includes('Approve?'));
    expect(shown().indexOf('Approve?')).toBeGreaterThan(shown().indexOf('Days (optional)'));
    type('t');
    expect(await approval).toMatchObject({ decision: 'approve', scope: 'tool' });
    prompter.close();
  });

  it('withdraws a question whose signal aborts — a shown one says so, a waiting one is never shown — and moves on', async () => {
    const { approvals, prompter, type, shown } = terminal();
    const shownController = new AbortController();
    const waitingController = new AbortController();
    const first = approvals.requestApproval(request('1'), { signal: shownController.signal });
    const second = prompter.interact(form, mcp(waitingController.signal));
    const third = approvals.requestApproval(request('3'), open());
    await until(() => shown().includes('request 1 of plan'));
    waitingController.abort();
    expect(await second).toEqual({ action: 'cancel' });
    shownController.abort();
    expect(await first).toMatchObject({ decision: 'deny' });
    expect(shown()).toContain('(withdrawn)\n');
    await until(() => shown().includes('request 3 of plan'));
    expect(shown()).not.toContain('Which city?');
    type('y');
    expect(await third).toMatchObject({ decision: 'approve' });
    prompter.close();
  });

  it('prints a page to open and a sign-in page, and asks about the first', async () => {
    const { prompter, type, shown } = terminal();
    const page = prompter.interact({ kind: 'url', purpose: 'elicitation', message: 'Confirm your account', url: 'https://example.org/confirm' }, mcp());
    await until(() => shown().includes('Did you open it'));
    expect(shown()).toContain(
      "MCP server 'weather' (tool 'mcp.weather.forecast') asks you to open a page: Confirm your account\n  https://example.org/confirm\n(it is not opened for you)",
    );
    type('y');
    expect(await page).toEqual({ action: 'accept' });
    const signIn = await prompter.interact({ kind: 'url', purpose: 'authorization', message: 'Sign in', url: 'https://auth.example.org/authorize?x=1' }, mcp());
    expect(signIn).toEqual({ action: 'accept' });
    expect(shown()).toContain('open this page in a browser (the command waits for the sign-in):\n  https://auth.example.org/authorize?x=1\n');
    prompter.close();
  });

  it('without a terminal, declines every question and says what would let it be answered', async () => {
    const { prompter, approvals, logger, shown } = terminal({ input: false });
    expect(await prompter.interact(form, mcp())).toEqual({ action: 'decline' });
    expect(await prompter.interact({ kind: 'url', purpose: 'authorization', message: 'Sign in', url: 'https://a.example.org' }, mcp())).toEqual({
      action: 'decline',
    });
    expect(await approvals.requestApproval(request('1'), open())).toMatchObject({ decision: 'deny', reason: 'declined' });
    expect(logger.at('warn').map((entry) => entry.message)).toEqual([
      "MCP server 'weather' (tool 'mcp.weather.forecast') asked a question (a form); it was declined: there is no terminal to ask on. Run the command in a terminal to answer it.",
      "MCP server 'weather' (tool 'mcp.weather.forecast') asked a question (authorization: open a page); it was declined: there is no terminal to ask on. Sign in first with 'agents mcp login weather' in a terminal.",
      "runtime 'approval' (tool 'files.write') asked a question (approval of request 1); it was declined: there is no terminal to ask on. Run the command in a terminal to answer it.",
    ]);
    expect(shown()).toBe('');
  });
});

describe('terminal text', () => {
  it('terminalSafe escapes control characters and cuts long text, counting the rest', () => {
    expect(terminalSafe('x'.repeat(2_010))).toBe(`${'x'.repeat(2_000)}… (10 more characters)`);
    expect(terminalSafe('tab\there')).toBe('tab\\u{9}here');
  });

  it('terminalLines keeps line breaks and tabs and blanks every other control or reordering character', () => {
    expect(terminalLines('a\nb\tc\u001b[2J\u202ed')).toBe('a\nb\tc [2J d');
    expect(terminalLines('y'.repeat(2_001))).toBe(`${'y'.repeat(2_000)}…`);
  });
});

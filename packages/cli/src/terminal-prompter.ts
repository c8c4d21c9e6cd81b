import readline from 'node:readline';
import type { ApprovalContext, ApprovalDecision, ApprovalHandler, ApprovalRequest } from '@ca/tool-lifecycle';
import { terminalJson, terminalSafe } from './terminal-text';

/** Options of {@link TerminalPrompter}. */
export interface TerminalPrompterOptions {
  /** Where answers are typed (the process's stdin). */
  readonly input: NodeJS.ReadableStream;
  /** Where questions are shown (the process's stderr, so stdout keeps the command's output). */
  readonly write: (text: string) => void;
  /** Who answers, for traces: `alice (terminal)`. */
  readonly who: string;
  /** A line printed under each approval request, e.g. how to answer from another terminal. */
  readonly hint?: (request: ApprovalRequest) => string | undefined;
}

interface Question {
  readonly text: string;
  readonly resolve: (line: string | undefined) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

// A Map, not an object: a typed word such as "constructor" must not find anything.
const ANSWERS: ReadonlyMap<string, 'once' | 'tool' | 'call' | 'deny'> = new Map([
  ['y', 'once'],
  ['yes', 'once'],
  ['t', 'tool'],
  ['tool', 'tool'],
  ['c', 'call'],
  ['call', 'call'],
  ['n', 'deny'],
  ['no', 'deny'],
]);
const ATTEMPTS = 3;

/**
 * The person at the terminal, asked one question at a time in the order
 * asked: approvals of tool calls now, and any other question through
 * {@link TerminalPrompter.ask} (an MCP server's form can be asked the same
 * way, one field per line). A question whose signal aborts is withdrawn;
 * when the input ends, every question gets no answer.
 */
export class TerminalPrompter implements ApprovalHandler {
  private readonly queue: Question[] = [];
  private current: Question | undefined;
  private lines: readline.Interface | undefined;
  private ended = false;

  constructor(private readonly options: TerminalPrompterOptions) {}

  /**
   * Shows `text` and resolves with the next line typed (trimmed), or
   * `undefined` when `signal` aborts first or the input has ended.
   */
  ask(text: string, signal?: AbortSignal): Promise<string | undefined> {
    return this.enqueue(text, signal, false);
  }

  /** Asks whether a tool call may run: y (once), t (the tool, for the rest of the plan), c (this call, for the rest of the plan), n [reason] (deny). */
  async requestApproval(request: ApprovalRequest, context: ApprovalContext): Promise<ApprovalDecision> {
    const signal = context.signal;
    const hint = this.options.hint?.(request);
    let text = describeRequest(request) + (hint === undefined ? '' : `  ${hint}\n`);
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const line = await this.enqueue(`${text}Approve? y = once, t = this tool for the rest of the plan, c = this call for the rest of the plan, n [reason] = deny: `, signal, attempt > 1);
      if (line === undefined) {
        return { decision: 'deny', reason: signal.aborted ? 'the request was withdrawn' : 'the terminal closed before an answer', decidedBy: this.options.who };
      }
      const word = line.split(/\s/, 1)[0] ?? '';
      const answer = ANSWERS.get(word.toLowerCase());
      if (answer === 'deny') {
        const reason = line.slice(word.length).trim();
        return { decision: 'deny', ...(reason.length > 0 ? { reason } : {}), decidedBy: this.options.who };
      }
      if (answer !== undefined) return { decision: 'approve', scope: answer, decidedBy: this.options.who };
      text = `'${terminalSafe(line, 40)}' is not an answer. `;
    }
    return { decision: 'deny', reason: `no answer among y, t, c and n after ${ATTEMPTS} tries`, decidedBy: this.options.who };
  }

  /** Stops reading the input (so that the process can exit); questions still waiting get no answer. */
  close(): void {
    this.ended = true;
    this.lines?.close();
    this.lines = undefined;
    this.endAll();
  }

  private enqueue(text: string, signal: AbortSignal | undefined, first: boolean): Promise<string | undefined> {
    if (this.ended || signal?.aborted === true) return Promise.resolve(undefined);
    return new Promise<string | undefined>((resolve) => {
      const question: Question = {
        text,
        signal,
        resolve: (line) => {
          signal?.removeEventListener('abort', question.onAbort);
          resolve(line);
        },
        onAbort: () => {
          if (this.current === question) {
            this.options.write('(withdrawn)\n');
            this.current = undefined;
            question.resolve(undefined);
            this.next();
          } else {
            const index = this.queue.indexOf(question);
            if (index >= 0) this.queue.splice(index, 1);
            question.resolve(undefined);
          }
        },
      };
      signal?.addEventListener('abort', question.onAbort, { once: true });
      if (first) this.queue.unshift(question);
      else this.queue.push(question);
      if (this.current === undefined) this.next();
    });
  }

  private next(): void {
    this.current = this.queue.shift();
    if (this.current === undefined) return;
    this.listen();
    this.options.write(this.current.text);
  }

  private listen(): void {
    if (this.lines !== undefined) return;
    this.lines = readline.createInterface({ input: this.options.input, terminal: false, crlfDelay: Infinity });
    this.lines.on('line', (line) => {
      const question = this.current;
      // A line typed while nothing is asked answers nothing.
      if (question === undefined) return;
      this.current = undefined;
      question.resolve(line.trim());
      this.next();
    });
    this.lines.on('close', () => {
      this.lines = undefined;
      this.ended = true;
      this.endAll();
    });
  }

  private endAll(): void {
    const waiting = [...(this.current === undefined ? [] : [this.current]), ...this.queue.splice(0)];
    this.current = undefined;
    for (const question of waiting) question.resolve(undefined);
  }
}

/** The request as the person sees it: what asks, which tool, what it may do, with which arguments. */
export function describeRequest(request: ApprovalRequest): string {
  const capability = request.capability;
  const traits = [
    capability.writes ? 'writes' : 'does not write',
    ...(capability.destructive ? ['may destroy data'] : []),
    ...(capability.openWorld ? ['reaches outside (network, remote services)'] : []),
    capability.checkpointable ? 'undoable' : 'cannot be undone',
  ];
  return (
    `\nApproval needed — request ${terminalSafe(request.id, 20)} of plan ${terminalSafe(request.planId, 100)}: ${terminalSafe(request.reason.text, 300)}\n` +
    `  tool       ${terminalSafe(request.toolName, 200)} (${terminalSafe(request.source, 40)}): ${traits.join(', ')}\n` +
    `  about      ${terminalSafe(request.description.split('\n')[0] ?? '', 200)}\n` +
    `  arguments  ${terminalJson(request.arguments)}\n`
  );
}

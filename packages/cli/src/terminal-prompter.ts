import readline from 'node:readline';
import type {
  ApprovalFormAnswer,
  ApprovalRequest,
  FormInteraction,
  InteractionContext,
  InteractionHandler,
  InteractionRequest,
  InteractionResponse,
  RuntimeLogger,
  UrlInteraction,
} from '@ca/tool-lifecycle';
import { terminalJson, terminalLines, terminalSafe } from './terminal-text';

/** Options of {@link TerminalPrompter}. */
export interface TerminalPrompterOptions {
  /** Where the person types (the process's stdin, when it and stderr are a terminal); absent when nobody can be asked. */
  readonly input: NodeJS.ReadableStream | undefined;
  /** Where questions are shown (the process's stderr, so stdout keeps the command's output). */
  readonly write: (text: string) => void;
  /** Where a question nobody could answer is reported. */
  readonly logger: RuntimeLogger;
  /** A line shown under an approval request: how else it may be answered (`agents plan approve …`). */
  readonly approvalHint?: (request: ApprovalRequest) => string | undefined;
}

/** Asks one line within a turn: the line typed (trimmed), or undefined when the turn was withdrawn or the input ended. */
type Ask = (question: string) => Promise<string | undefined>;

/** One interaction, from its first question to its answer: nothing else is asked meanwhile. */
interface Turn {
  readonly signal: AbortSignal;
  /** Runs the turn (when it comes). */
  start(): void;
  /** Ends the turn unasked (withdrawn while it waited, or the terminal closed). */
  skip(): void;
}

type Value = string | number | boolean | string[];
interface Field {
  readonly key: string;
  readonly label: string;
  readonly description?: string;
  readonly type: string;
  readonly required: boolean;
  readonly choices?: readonly { readonly value: string; readonly title: string }[];
  readonly multiple: boolean;
  readonly default?: unknown;
}

// A Map, not an object: a typed word such as "constructor" must not find anything.
const APPROVAL_ANSWERS: ReadonlyMap<string, ApprovalFormAnswer> = new Map([
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
 * The person at the terminal: the `agents` command's one `InteractionHandler`.
 * Every question goes through it — a tool call to approve (a form carrying
 * `approval`, from `approvalThroughInteraction`), an MCP server's form or page
 * to open, an OAuth sign-in page — on stderr, answered on stdin, one
 * interaction at a time in the order asked: a form is asked field by field
 * and nothing else comes between its fields. A question whose signal aborts
 * is withdrawn (shown: it says so; waiting: it is never shown). Lines typed
 * while nothing is asked answer nothing, so a stray `y` cannot approve the
 * next request. Without a terminal every question is declined, and the
 * decline is logged with what to do.
 */
export class TerminalPrompter implements InteractionHandler {
  private readonly queue: Turn[] = [];
  private current: Turn | undefined;
  /** Lines typed during the current turn that no question has taken yet. */
  private typed: string[] = [];
  private waiting: ((line: string | undefined) => void) | undefined;
  private lines: readline.Interface | undefined;
  private ended = false;

  constructor(private readonly options: TerminalPrompterOptions) {}

  interact(request: InteractionRequest, context: InteractionContext): Promise<InteractionResponse> {
    if (this.options.input === undefined) return Promise.resolve(this.declineUnasked(request, context));
    if (request.kind === 'form' && request.approval !== undefined) {
      const approval = request.approval;
      return this.take(context.signal, { action: 'cancel' }, (ask) => this.askApproval(approval, ask, context.signal));
    }
    if (request.kind === 'form') return this.take(context.signal, { action: 'cancel' }, (ask) => this.askForm(request, context, ask));
    if (request.kind === 'url') return this.take(context.signal, { action: 'cancel' }, (ask) => this.askPage(request, context, ask));
    return Promise.resolve({ action: 'decline' });
  }

  /** Stops reading the input (so that the process can exit); questions still waiting get no answer. */
  close(): void {
    this.ended = true;
    this.lines?.close();
    this.lines = undefined;
    this.endAll();
  }

  /** Runs `run` when its turn comes, alone on the terminal; `withdrawn` when `signal` aborts first or the terminal is gone. */
  private take<T>(signal: AbortSignal, withdrawn: T, run: (ask: Ask) => Promise<T>): Promise<T> {
    if (this.ended || signal.aborted) return Promise.resolve(withdrawn);
    return new Promise<T>((resolve) => {
      let settled = false;
      const settle = (value: T): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const turn: Turn = {
        signal,
        start: () => {
          const ask: Ask = (question) => this.askLine(turn, question);
          run(ask)
            .then(settle, () => settle(withdrawn))
            .finally(() => this.finishTurn(turn));
        },
        skip: () => settle(withdrawn),
      };
      const onAbort = (): void => {
        const index = this.queue.indexOf(turn);
        if (index >= 0) {
          this.queue.splice(index, 1);
          settle(withdrawn);
        } else if (this.current === turn && this.waiting !== undefined) {
          // The runtime says why (answered elsewhere, the plan cancelled or ended) in the signal's reason.
          const reason = signal.reason as { name?: unknown; message?: unknown } | undefined;
          const why =
            reason?.name !== 'AbortError' && typeof reason?.message === 'string' && reason.message.length > 0 ? `: ${terminalSafe(reason.message, 300)}` : '';
          this.options.write(`(withdrawn${why})\n`);
          this.answer(undefined);
        }
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(turn);
      if (this.current === undefined) this.next();
    });
  }

  private askLine(turn: Turn, question: string): Promise<string | undefined> {
    if (this.ended || turn.signal.aborted || this.current !== turn) return Promise.resolve(undefined);
    this.options.write(question);
    const typed = this.typed.shift();
    if (typed !== undefined) return Promise.resolve(typed);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  private answer(line: string | undefined): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(line);
  }

  private finishTurn(turn: Turn): void {
    if (this.current !== turn) return;
    this.current = undefined;
    this.typed = [];
    this.answer(undefined);
    this.next();
  }

  private next(): void {
    if (this.current !== undefined) return;
    const turn = this.queue.shift();
    if (turn === undefined) return;
    if (this.ended) {
      turn.skip();
      this.next();
      return;
    }
    this.current = turn;
    this.listen();
    turn.start();
  }

  private listen(): void {
    if (this.lines !== undefined || this.options.input === undefined) return;
    this.lines = readline.createInterface({ input: this.options.input, terminal: false, crlfDelay: Infinity });
    this.lines.on('line', (line) => {
      // A line typed while nothing is asked answers nothing.
      if (this.current === undefined) return;
      const text = line.trim();
      if (this.waiting !== undefined) this.answer(text);
      else this.typed.push(text);
    });
    this.lines.on('close', () => {
      this.lines = undefined;
      this.ended = true;
      this.endAll();
    });
  }

  private endAll(): void {
    this.answer(undefined);
    for (const turn of this.queue.splice(0)) turn.skip();
  }

  /** Whether a tool call may run: y (once), t (the tool, for the rest of the plan), c (this call, for the rest of the plan), n [reason] (deny). */
  private async askApproval(request: ApprovalRequest, ask: Ask, signal: AbortSignal): Promise<InteractionResponse> {
    const hint = this.options.approvalHint?.(request);
    let text = describeRequest(request) + (hint === undefined ? '' : `  ${terminalSafe(hint, 300)}\n`);
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const line = await ask(`${text}Approve? y = once, t = this tool for the rest of the plan, c = this call for the rest of the plan, n [reason] = deny: `);
      if (line === undefined) {
        return signal.aborted ? { action: 'cancel' } : { action: 'accept', content: { answer: 'deny', reason: 'the terminal closed before an answer' } };
      }
      const word = line.split(/\s/, 1)[0] ?? '';
      const answer = APPROVAL_ANSWERS.get(word.toLowerCase());
      if (answer === 'deny') {
        const reason = line.slice(word.length).trim();
        return { action: 'accept', content: { answer, ...(reason.length > 0 ? { reason } : {}) } };
      }
      if (answer !== undefined) return { action: 'accept', content: { answer } };
      text = `'${terminalSafe(line, 40)}' is not an answer. `;
    }
    return { action: 'accept', content: { answer: 'deny', reason: `no answer among y, t, c and n after ${ATTEMPTS} tries` } };
  }

  /** An MCP server's form (or another source's), field by field. */
  private async askForm(request: FormInteraction, context: InteractionContext, ask: Ask): Promise<InteractionResponse> {
    const write = this.options.write;
    write(`\n${asker(context)} asks: ${terminalLines(request.message)}\n`);
    const start = answerOf(await ask('Answer it? [y]es / [n]o (decline) / [c]ancel: '));
    if (start.action !== 'accept') return start;
    const content: Record<string, Value> = {};
    for (const field of fieldsOf(request.schema)) {
      const value = await askField(ask, write, field);
      if (value === null) return { action: 'cancel' };
      if (value !== undefined) content[field.key] = value;
    }
    return { action: 'accept', content };
  }

  /** A page to open: printed, never opened for the person; a sign-in page is printed and the command waits for the sign-in. */
  private async askPage(request: UrlInteraction, context: InteractionContext, ask: Ask): Promise<InteractionResponse> {
    const write = this.options.write;
    if (request.purpose === 'authorization') {
      write(`\nSign in to ${asker(context)}: open this page in a browser (the command waits for the sign-in):\n  ${terminalSafe(request.url)}\n\n`);
      return { action: 'accept' };
    }
    write(`\n${asker(context)} asks you to open a page: ${terminalLines(request.message)}\n  ${terminalSafe(request.url)}\n(it is not opened for you)\n`);
    return answerOf(await ask('Did you open it, and agree? [y]es / [n]o / [c]ancel: '));
  }

  /** No terminal: the question is declined, and the log says what would have let it be answered. */
  private declineUnasked(request: InteractionRequest, context: InteractionContext): InteractionResponse {
    const known = request.kind === 'form' || request.kind === 'url';
    if (!known) return { action: 'decline' };
    const what =
      request.kind === 'url' ? `${request.purpose}: open a page` : request.approval !== undefined ? `approval of request ${request.approval.id}` : 'a form';
    const advice =
      request.kind === 'url' && request.purpose === 'authorization'
        ? ` Sign in first with 'agents mcp login ${context.origin}' in a terminal.`
        : ' Run the command in a terminal to answer it.';
    this.options.logger.warn(`${asker(context)} asked a question (${what}); it was declined: there is no terminal to ask on.${advice}`, {
      ...(context.source === 'mcp' ? { server: context.origin } : {}),
      ...(context.planId === undefined ? {} : { planId: context.planId }),
    });
    return { action: 'decline' };
  }
}

/** Who asks, as the person sees it. */
function asker(context: InteractionContext): string {
  const tool = context.toolName === undefined ? '' : ` (tool '${terminalSafe(context.toolName, 200)}')`;
  if (context.source === 'mcp') return `MCP server '${terminalSafe(context.origin, 200)}'${tool}`;
  return `${terminalSafe(context.source, 40)} '${terminalSafe(context.origin, 200)}'${tool}`;
}

function answerOf(line: string | undefined): InteractionResponse {
  const answer = (line ?? '').toLowerCase();
  if (line === undefined || answer === 'c' || answer === 'cancel') return { action: 'cancel' };
  return answer === 'y' || answer === 'yes' ? { action: 'accept' } : { action: 'decline' };
}

/** The value typed for `field`: undefined to leave it out, null when the person gave up (end of input, or too many wrong answers). */
async function askField(ask: Ask, write: (text: string) => void, field: Field): Promise<Value | undefined | null> {
  const choices =
    field.choices === undefined
      ? ''
      : ` (${field.multiple ? 'one or more of, comma-separated' : 'one of'}: ${field.choices.map((choice) => (choice.title === choice.value ? choice.value : `${choice.value} = ${choice.title}`)).join(', ')})`;
  const fallback = field.default === undefined ? '' : ` [${Array.isArray(field.default) ? field.default.join(', ') : String(field.default)}]`;
  if (field.description !== undefined) write(`  ${field.label}: ${field.description}\n`);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const text = await ask(`  ${field.label}${field.required ? '' : ' (optional)'}${choices}${fallback}: `);
    if (text === undefined) return null;
    if (text.length === 0) {
      if (field.default !== undefined) return field.default as Value;
      if (!field.required) return undefined;
      write('  An answer is required.\n');
      continue;
    }
    const value = parse(field, text);
    if (typeof value === 'object' && !Array.isArray(value)) {
      write(`  ${value.problem}\n`);
      continue;
    }
    return value;
  }
  write('  Too many answers that do not fit; the question is cancelled.\n');
  return null;
}

/** The typed value, or what is wrong with it. */
function parse(field: Field, text: string): Value | { readonly problem: string } {
  if (field.multiple) {
    const values = text
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0);
    const unknown = values.filter((item) => field.choices !== undefined && !field.choices.some((choice) => choice.value === item));
    return unknown.length > 0 ? { problem: `Not a choice: ${unknown.join(', ')}.` } : values;
  }
  if (field.choices !== undefined && !field.choices.some((choice) => choice.value === text))
    return { problem: `Choose one of: ${field.choices.map((choice) => choice.value).join(', ')}.` };
  switch (field.type) {
    case 'boolean':
      if (/^(y|yes|true)$/i.test(text)) return true;
      if (/^(n|no|false)$/i.test(text)) return false;
      return { problem: 'Answer yes or no.' };
    case 'integer':
    case 'number': {
      const number = Number(text);
      if (!Number.isFinite(number) || (field.type === 'integer' && !Number.isInteger(number)))
        return { problem: `Expected ${field.type === 'integer' ? 'a whole number' : 'a number'}.` };
      return number;
    }
    default:
      return text;
  }
}

/** The fields of a flat elicitation schema, in their order. */
function fieldsOf(schema: Readonly<Record<string, unknown>>): Field[] {
  const properties =
    typeof schema['properties'] === 'object' && schema['properties'] !== null ? (schema['properties'] as Record<string, Record<string, unknown>>) : {};
  const required = new Set(
    Array.isArray(schema['required']) ? (schema['required'] as unknown[]).filter((item): item is string => typeof item === 'string') : [],
  );
  return Object.entries(properties).map(([key, property]) => {
    const items = (property['items'] ?? {}) as Record<string, unknown>;
    const multiple = property['type'] === 'array';
    const choices = choicesOf(multiple ? items : property, property);
    return {
      key,
      label: terminalLines(typeof property['title'] === 'string' ? property['title'] : key),
      ...(typeof property['description'] === 'string' ? { description: terminalLines(property['description']) } : {}),
      type: typeof property['type'] === 'string' ? property['type'] : 'string',
      required: required.has(key),
      multiple,
      ...(choices === undefined ? {} : { choices }),
      ...(property['default'] === undefined ? {} : { default: property['default'] }),
    };
  });
}

function choicesOf(schema: Record<string, unknown>, property: Record<string, unknown>): { value: string; title: string }[] | undefined {
  const titled = (Array.isArray(schema['oneOf']) ? schema['oneOf'] : Array.isArray(schema['anyOf']) ? schema['anyOf'] : undefined) as
    Record<string, unknown>[] | undefined;
  if (titled !== undefined) {
    return titled
      .filter((item) => typeof item?.['const'] === 'string')
      .map((item) => ({ value: item['const'] as string, title: terminalLines(String(item['title'] ?? item['const'])) }));
  }
  if (!Array.isArray(schema['enum'])) return undefined;
  const names = Array.isArray(property['enumNames']) ? (property['enumNames'] as unknown[]) : [];
  return (schema['enum'] as unknown[]).map((value, index) => ({ value: String(value), title: terminalLines(String(names[index] ?? value)) }));
}

/** The request as the person sees it: what asks, which tool, what it may do, with which arguments. */
export function describeRequest(request: ApprovalRequest): string {
  const capability = request.capability;
  const traits = [
    capability.writes ? 'writes' : 'does not write',
    ...(capability.destructive ? ['may destroy data'] : []),
    ...(capability.openWorld ? ['open world (reaches the network or remote services)'] : []),
    capability.checkpointable ? 'undoable' : 'cannot be undone',
  ];
  return (
    `\nApproval needed — request ${terminalSafe(request.id, 20)} of plan ${terminalSafe(request.planId, 100)}: ${terminalSafe(request.reason.text, 300)}\n` +
    `  tool       ${terminalSafe(request.toolName, 200)} (${terminalSafe(request.source, 40)}): ${traits.join(', ')}\n` +
    `  about      ${terminalSafe(request.description.split('\n')[0] ?? '', 200)}\n` +
    `  arguments  ${terminalJson(request.arguments)}\n`
  );
}

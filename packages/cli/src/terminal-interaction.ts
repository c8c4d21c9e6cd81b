import { createInterface, type Interface } from 'node:readline';
import type { InteractionContext, InteractionHandler, InteractionRequest, InteractionResponse, RuntimeLogger } from '@ca/tool-lifecycle';

/** Where {@link createTerminalInteraction} asks. */
export interface TerminalInteractionOptions {
  /** What the person types; undefined when there is no terminal to ask on. */
  readonly input: NodeJS.ReadableStream | undefined;
  /** Where questions go (the command's stderr: stdout stays the command's output). */
  readonly write: (text: string) => void;
  /** Where a question nobody could answer is reported. */
  readonly logger: RuntimeLogger;
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

const ATTEMPTS = 3;

/**
 * The `agents` command's `InteractionHandler`: asks on the terminal (questions
 * on stderr, answers from stdin), one question at a time. A form is asked
 * field by field; a page to open is printed, never opened for the person;
 * an OAuth sign-in page is printed and the command waits for the sign-in.
 * Without a terminal every question is declined and the decline is logged.
 */
export function createTerminalInteraction(options: TerminalInteractionOptions): InteractionHandler {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    interact(request, context) {
      const turn = queue.then(() => ask(options, request, context));
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}

async function ask(options: TerminalInteractionOptions, request: InteractionRequest, context: InteractionContext): Promise<InteractionResponse> {
  const { write, logger } = options;
  const who = `MCP server '${clean(context.origin)}'${context.toolName === undefined ? '' : ` (tool '${context.toolName}')`}`;
  if (!isKnown(request)) return { action: 'decline' };
  if (options.input === undefined) {
    const advice = request.kind === 'url' && request.purpose === 'authorization' ? ` Sign in first with 'agents mcp login ${context.origin}' in a terminal.` : ' Run the command in a terminal to answer it.';
    logger.warn(`${who} asked a question (${request.kind === 'url' ? `${request.purpose}: open a page` : 'a form'}); it was declined: there is no terminal to ask on.${advice}`, {
      server: context.origin,
      ...(context.planId === undefined ? {} : { planId: context.planId }),
    });
    return { action: 'decline' };
  }
  if (request.kind === 'url' && request.purpose === 'authorization') {
    write(`\nSign in to ${who}: open this page in a browser (the command waits for the sign-in):\n  ${clean(request.url)}\n\n`);
    return { action: 'accept' };
  }
  const lines = new LineReader(options.input, context.signal);
  try {
    if (request.kind === 'url') {
      write(`\n${who} asks you to open a page: ${clean(request.message)}\n  ${clean(request.url)}\n(it is not opened for you)\n`);
      const answer = await lines.ask(write, 'Did you open it, and agree? [y]es / [n]o / [c]ancel: ');
      return answerOf(answer);
    }
    write(`\n${who} asks: ${clean(request.message)}\n`);
    const start = answerOf(await lines.ask(write, 'Answer it? [y]es / [n]o (decline) / [c]ancel: '));
    if (start.action !== 'accept') return start;
    const content: Record<string, Value> = {};
    for (const field of fieldsOf(request.schema)) {
      const value = await askField(lines, write, field);
      if (value === null) return { action: 'cancel' };
      if (value !== undefined) content[field.key] = value;
    }
    return { action: 'accept', content };
  } finally {
    lines.close();
  }
}

function isKnown(request: InteractionRequest): boolean {
  return request.kind === 'form' || request.kind === 'url';
}

function answerOf(line: string | undefined): InteractionResponse {
  const answer = (line ?? '').trim().toLowerCase();
  if (line === undefined || answer === 'c' || answer === 'cancel') return { action: 'cancel' };
  return answer === 'y' || answer === 'yes' ? { action: 'accept' } : { action: 'decline' };
}

/** The value typed for `field`: undefined to leave it out, null when the person gave up (end of input, or too many wrong answers). */
async function askField(lines: LineReader, write: (text: string) => void, field: Field): Promise<Value | undefined | null> {
  const choices = field.choices === undefined ? '' : ` (${field.multiple ? 'one or more of, comma-separated' : 'one of'}: ${field.choices.map((choice) => (choice.title === choice.value ? choice.value : `${choice.value} = ${choice.title}`)).join(', ')})`;
  const fallback = field.default === undefined ? '' : ` [${Array.isArray(field.default) ? field.default.join(', ') : String(field.default)}]`;
  if (field.description !== undefined) write(`  ${field.label}: ${field.description}\n`);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const line = await lines.ask(write, `  ${field.label}${field.required ? '' : ' (optional)'}${choices}${fallback}: `);
    if (line === undefined) return null;
    const text = line.trim();
    if (text.length === 0) {
      if (field.default !== undefined) return field.default as Value;
      if (!field.required) return undefined;
      write('  An answer is required.\n');
      continue;
    }
    const value = parse(field, text);
    if (typeof value === 'string' && value.startsWith('\u0000')) {
      write(`  ${value.slice(1)}\n`);
      continue;
    }
    return value;
  }
  write('  Too many answers that do not fit; the question is cancelled.\n');
  return null;
}

/** The typed value, or a problem (a string starting with NUL). */
function parse(field: Field, text: string): Value {
  const problem = (message: string): string => `\u0000${message}`;
  if (field.multiple) {
    const values = text.split(',').map((item) => item.trim()).filter((item) => item.length > 0);
    const unknown = values.filter((item) => field.choices !== undefined && !field.choices.some((choice) => choice.value === item));
    return unknown.length > 0 ? problem(`Not a choice: ${unknown.join(', ')}.`) : values;
  }
  if (field.choices !== undefined && !field.choices.some((choice) => choice.value === text)) return problem(`Choose one of: ${field.choices.map((choice) => choice.value).join(', ')}.`);
  switch (field.type) {
    case 'boolean':
      if (/^(y|yes|true)$/i.test(text)) return true;
      if (/^(n|no|false)$/i.test(text)) return false;
      return problem('Answer yes or no.');
    case 'integer':
    case 'number': {
      const number = Number(text);
      if (!Number.isFinite(number) || (field.type === 'integer' && !Number.isInteger(number))) return problem(`Expected ${field.type === 'integer' ? 'a whole number' : 'a number'}.`);
      return number;
    }
    default:
      return text;
  }
}

/** The fields of a flat elicitation schema, in their order. */
function fieldsOf(schema: Readonly<Record<string, unknown>>): Field[] {
  const properties = typeof schema['properties'] === 'object' && schema['properties'] !== null ? (schema['properties'] as Record<string, Record<string, unknown>>) : {};
  const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as unknown[]).filter((item): item is string => typeof item === 'string') : []);
  return Object.entries(properties).map(([key, property]) => {
    const items = (property['items'] ?? {}) as Record<string, unknown>;
    const multiple = property['type'] === 'array';
    const choices = choicesOf(multiple ? items : property, property);
    return {
      key,
      label: clean(typeof property['title'] === 'string' ? property['title'] : key),
      ...(typeof property['description'] === 'string' ? { description: clean(property['description']) } : {}),
      type: typeof property['type'] === 'string' ? property['type'] : 'string',
      required: required.has(key),
      multiple,
      ...(choices === undefined ? {} : { choices }),
      ...(property['default'] === undefined ? {} : { default: property['default'] }),
    };
  });
}

function choicesOf(schema: Record<string, unknown>, property: Record<string, unknown>): { value: string; title: string }[] | undefined {
  const titled = (Array.isArray(schema['oneOf']) ? schema['oneOf'] : Array.isArray(schema['anyOf']) ? schema['anyOf'] : undefined) as Record<string, unknown>[] | undefined;
  if (titled !== undefined) return titled.filter((item) => typeof item?.['const'] === 'string').map((item) => ({ value: item['const'] as string, title: clean(String(item['title'] ?? item['const'])) }));
  if (!Array.isArray(schema['enum'])) return undefined;
  const names = Array.isArray(property['enumNames']) ? (property['enumNames'] as unknown[]) : [];
  return (schema['enum'] as unknown[]).map((value, index) => ({ value: String(value), title: clean(String(names[index] ?? value)) }));
}

/** A server wrote this text: no control characters (terminal escapes) reach the terminal. */
function clean(text: string): string {
  // eslint-disable-next-line no-control-regex
  const stripped = String(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, ' ');
  return stripped.length > 2_000 ? `${stripped.slice(0, 2_000)}…` : stripped;
}

/** Lines of the terminal, one question at a time; the end of input (or the request withdrawn) answers undefined. */
class LineReader {
  readonly #lines: string[] = [];
  #waiting: ((line: string | undefined) => void) | undefined;
  #ended = false;
  readonly #reader: Interface;
  readonly #signal: AbortSignal;
  readonly #onAbort = () => this.#end();

  constructor(input: NodeJS.ReadableStream, signal: AbortSignal) {
    this.#reader = createInterface({ input, terminal: false });
    this.#reader.on('line', (line) => {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      if (waiting !== undefined) waiting(line);
      else this.#lines.push(line);
    });
    this.#reader.on('close', () => this.#end());
    if ((input as { readableEnded?: boolean }).readableEnded === true) this.#ended = true;
    this.#signal = signal;
    signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  ask(write: (text: string) => void, question: string): Promise<string | undefined> {
    write(question);
    if (this.#lines.length > 0) return Promise.resolve(this.#lines.shift());
    if (this.#ended) return Promise.resolve(undefined);
    return new Promise((resolve) => (this.#waiting = resolve));
  }

  close(): void {
    this.#signal.removeEventListener('abort', this.#onAbort);
    this.#reader.close();
  }

  #end(): void {
    this.#ended = true;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.(undefined);
  }
}

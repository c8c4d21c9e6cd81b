/** An MCP resource link a result carried, kept as such (not read, not inlined). */
export interface RenderedLink {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
}

/**
 * One piece of what a model reads back. A resource link is a text part (a
 * note naming it, for APIs that take text) with `link` set, which the MCP
 * format passes on as a `resource_link` block. A text part may also stand for
 * an MCP content block that has no common form (audio, an embedded resource):
 * `block` is that block as the tool produced it, for formats that take MCP
 * content as it is (MCP); the others read `text`.
 */
export type RenderedPart =
  | { readonly type: 'text'; readonly text: string; readonly link?: RenderedLink; readonly block?: Readonly<Record<string, unknown>> }
  | { readonly type: 'image'; readonly data: string; readonly mimeType: string };

/** A tool's result, ready to be put in any provider's shape. */
export interface RenderedResult {
  readonly isError: boolean;
  /** Text and images in order (the text already within the budget). */
  readonly parts: readonly RenderedPart[];
  /** The text parts joined, images as a short note: for providers that take text only. */
  readonly text: string;
  /** The structured output, for providers that take JSON (Gemini `response.output`, MCP `structuredContent`); absent when cut or absent. */
  readonly structured?: unknown;
  /** True when the budget cut the text. */
  readonly truncated: boolean;
  /** The error's code, for a failure. */
  readonly code?: string;
}

/** Limits of what a model gets back. */
export interface RenderBudget {
  /** Most characters of text a result may have; beyond, it is cut with a marker saying so. */
  readonly maxCharacters: number;
  /** Largest image (in bytes, decoded) passed on; a larger one becomes a note. */
  readonly maxImageBytes: number;
}

export const DEFAULT_BUDGET: RenderBudget = Object.freeze({ maxCharacters: 20_000, maxImageBytes: 4 * 1024 * 1024 });

interface ContentBlock {
  readonly type?: unknown;
  readonly text?: unknown;
  readonly data?: unknown;
  readonly mimeType?: unknown;
  readonly uri?: unknown;
  readonly name?: unknown;
  readonly title?: unknown;
  readonly description?: unknown;
  readonly resource?: { readonly uri?: unknown; readonly text?: unknown; readonly mimeType?: unknown };
}

/**
 * The parts of a successful result: its content blocks (MCP-shaped: text,
 * image, resource, resource link) when it has any, else its output (a
 * string as is, anything else as JSON). Text beyond the budget is cut at a
 * character boundary and ends with an explicit marker naming how much was
 * shown and the execution that holds the whole output.
 * @throws Never for JSON data (an output that cannot be serialised is reported as such).
 */
export function renderSuccess(output: unknown, content: readonly unknown[] | undefined, executionId: string | undefined, budget: RenderBudget): RenderedResult {
  const parts: RenderedPart[] = [];
  if (content !== undefined && content.length > 0) {
    for (const raw of content) parts.push(...blockParts(raw as ContentBlock, budget));
  }
  if (parts.length === 0 || !parts.some((part) => part.type === 'text')) {
    parts.unshift({ type: 'text', text: outputText(output) });
  }
  return finish(parts, false, executionId, budget, output);
}

/** The parts of content blocks (resource links, images, text), as a successful result renders them. */
export function contentParts(content: readonly unknown[] | undefined, budget: RenderBudget): RenderedPart[] {
  const parts: RenderedPart[] = [];
  for (const raw of content ?? []) parts.push(...blockParts(raw as ContentBlock, budget));
  return parts;
}

/** A failure: one text part (already safe for a model), never cut below its own length limits. */
export function renderFailure(text: string, code: string, budget: RenderBudget): RenderedResult {
  const part: RenderedPart = { type: 'text', text: text.length > budget.maxCharacters ? cut(text, budget.maxCharacters, text.length, undefined) : text };
  return { isError: true, parts: [part], text: part.text, truncated: text.length > budget.maxCharacters, code };
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (output === undefined) return '(no output)';
  try {
    return JSON.stringify(output) ?? String(output);
  } catch {
    return '(an output that cannot be written as JSON)';
  }
}

function blockParts(block: ContentBlock, budget: RenderBudget): RenderedPart[] {
  switch (block?.type) {
    case 'text':
      return typeof block.text === 'string' ? [{ type: 'text', text: block.text }] : [];
    case 'image': {
      if (typeof block.data !== 'string' || typeof block.mimeType !== 'string') return [];
      const bytes = Math.floor((block.data.length * 3) / 4);
      if (bytes > budget.maxImageBytes)
        return [{ type: 'text', text: `[an image (${block.mimeType}, ${bytes} bytes) was left out: larger than ${budget.maxImageBytes} bytes]` }];
      return [{ type: 'image', data: block.data, mimeType: block.mimeType }];
    }
    case 'resource': {
      const uri = String(block.resource?.uri ?? '');
      if (typeof block.resource?.text === 'string') return [{ type: 'text', text: block.resource.text, block: block as Readonly<Record<string, unknown>> }];
      const blob = (block.resource as { blob?: unknown } | undefined)?.blob;
      const bytes = typeof blob === 'string' ? Math.floor((blob.length * 3) / 4) : 0;
      if (bytes > budget.maxImageBytes)
        return [{ type: 'text', text: `[resource ${uri} (${bytes} bytes) was left out: larger than ${budget.maxImageBytes} bytes]` }];
      return [{ type: 'text', text: `[resource ${uri}]`, block: block as Readonly<Record<string, unknown>> }];
    }
    case 'resource_link': {
      if (typeof block.uri !== 'string') return [];
      return [{ type: 'text', text: `[resource link ${block.uri}${typeof block.name === 'string' ? ` (${block.name})` : ''}]`, link: linkOf(block) }];
    }
    case 'audio': {
      const mimeType = String(block.mimeType ?? 'unknown type');
      const bytes = typeof block.data === 'string' ? Math.floor((block.data.length * 3) / 4) : 0;
      if (typeof block.data !== 'string' || bytes > budget.maxImageBytes) return [{ type: 'text', text: `[audio (${mimeType}, ${bytes} bytes) left out]` }];
      return [{ type: 'text', text: `[audio (${mimeType}) left out]`, block: block as Readonly<Record<string, unknown>> }];
    }
    default:
      return [];
  }
}

/** The fields of a resource link a model may be shown (strings only; a missing name is the URI). */
export function linkOf(block: {
  readonly uri?: unknown;
  readonly name?: unknown;
  readonly title?: unknown;
  readonly description?: unknown;
  readonly mimeType?: unknown;
}): RenderedLink {
  const uri = String(block.uri);
  const text = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value.slice(0, 1_000) : undefined);
  const title = text(block.title);
  const description = text(block.description);
  const mimeType = text(block.mimeType);
  return {
    uri,
    name: text(block.name) ?? uri,
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    ...(mimeType === undefined ? {} : { mimeType }),
  };
}

function finish(parts: RenderedPart[], isError: boolean, executionId: string | undefined, budget: RenderBudget, structured: unknown): RenderedResult {
  let total = 0;
  for (const part of parts) if (part.type === 'text') total += part.text.length;
  let truncated = false;
  let kept = parts;
  if (total > budget.maxCharacters) {
    truncated = true;
    kept = [];
    let room = budget.maxCharacters;
    for (const part of parts) {
      if (part.type !== 'text') {
        kept.push(part);
        continue;
      }
      if (room <= 0) continue;
      if (part.text.length <= room) {
        kept.push(part);
        room -= part.text.length;
      } else {
        kept.push({ type: 'text', text: cut(part.text, room, total, executionId) });
        room = 0;
      }
    }
  }
  const only = kept.length === 1 ? kept[0] : undefined;
  const text = only?.type === 'text' ? only.text : kept.map((part) => (part.type === 'text' ? part.text : `[image ${part.mimeType}]`)).join('\n');
  const result: { -readonly [K in keyof RenderedResult]: RenderedResult[K] } = { isError, parts: kept, text, truncated };
  if (!truncated && structured !== undefined) result.structured = structured;
  return result;
}

/** The first `room` characters (never half a surrogate pair) and the marker. */
function cut(text: string, room: number, total: number, executionId: string | undefined): string {
  let end = room;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  const where = executionId === undefined ? '' : ` The whole output is kept with execution ${executionId}.`;
  return `${text.slice(0, end)}\n…[truncated: ${end} of ${total} characters shown.${where} Ask for less (a narrower range, a filter) to see the rest.]`;
}

import type { ResultHandle } from '@ca/tool-lifecycle';
import type { RenderedPart, RenderedResult } from './render-result';

/** The names a model knows the runtime's result tools by (`results_read` for OpenAI). */
export interface HandleToolNames {
  readonly read: string;
  readonly grep: string;
}

/**
 * What a model reads for an output kept behind a handle: where it is kept,
 * its size, the preview (the first and last lines of a text, the shape of
 * JSON) and how to read the rest with the result tools, by the names the
 * model knows them. Resource links the result carried follow as they are.
 */
export function renderHandle(handle: ResultHandle, names: HandleToolNames, links: readonly RenderedPart[] = []): RenderedResult {
  const id = JSON.stringify(handle.handle);
  const lines: string[] = [];
  if (handle.format === 'text') {
    lines.push(
      `The output is too large to show whole: it is kept as ${handle.handle} for the rest of the plan (text, ${handle.bytes} bytes, ${handle.lines ?? 0} lines).`,
      'First lines:',
      trimmed(handle.head ?? ''),
      '…',
      'Last lines:',
      trimmed(handle.tail ?? ''),
      `Read other lines with ${names.read} {"handle":${id},"lines":{"from":1,"to":100}} (or "bytes":{"start":0}), or find lines with ${names.grep} {"handle":${id},"pattern":"<regular expression>"}.`,
    );
  } else {
    lines.push(
      `The output is too large to show whole: it is kept as ${handle.handle} for the rest of the plan (JSON, ${handle.bytes} bytes). Its shape:`,
      handle.shape ?? '(unknown)',
      `Read a part with ${names.read} {"handle":${id},"pointer":"/…"} (a JSON pointer; or "lines" of the JSON, indented by two spaces), or find lines with ${names.grep} {"handle":${id},"pattern":"<regular expression>"}.`,
    );
  }
  const text = lines.join('\n');
  const parts: RenderedPart[] = [{ type: 'text', text }, ...links];
  return { isError: false, parts, text: parts.map((part) => (part.type === 'text' ? part.text : `[image ${part.mimeType}]`)).join('\n'), truncated: false };
}

function trimmed(text: string): string {
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

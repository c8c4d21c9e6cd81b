import { lstat } from 'node:fs/promises';
import picomatch from 'picomatch';
import { openConfinedFile, type ConfinedFile } from '@ca/tool-context';
import { compileLinearPattern, PatternCompileError, type LinearPattern } from '@ca/schema';
import { toolSuccess } from '@ca/tool-lifecycle';
import { schema, type BuiltinToolSpec, type ToolCall } from '../builtin-tool';
import { readLines } from '../line-reader';
import { walk, type WalkProgress } from '../walk';
import { PATH_PROPERTY, RESOURCE_PROPERTY } from './common';

/** One match of `builtin.fs.grep`. */
export interface GrepMatch {
  readonly path: string;
  /** 1-based line number. */
  readonly line: number;
  /** The matching line without its line ending, cut to `files.grepMaxLineLength` characters. */
  readonly text: string;
}

const MAX_MATCHED_LINE_BYTES = 64 * 1024;
const BINARY_SNIFF_BYTES = 8 * 1024;

/** `builtin.fs.grep`: lines matching a regular expression, streamed line by line. */
export const grepTool: BuiltinToolSpec = {
  name: 'builtin.fs.grep',
  description:
    'Search file contents for a regular expression (RE2 syntax, as in ripgrep or Go; no lookaround or backreferences) in one file or in every file under a folder inside the bound resources, line by line. Returns the absolute path, ' +
    'the 1-based line number and the text of each matching line, at most maxMatches; truncated says there may be more. Narrow the files with glob (e.g. "**/*.ts", relative to path); ' +
    'set literal: true to search for plain text, ignoreCase: true to ignore case. Binary files (with a NUL byte near the start) and symbolic links are skipped.',
  capability: { writes: false, checkpointable: true, idempotent: true, openWorld: false },
  inputSchema: schema({
    type: 'object',
    properties: {
      pattern: { type: 'string', minLength: 1, description: 'Regular expression in RE2 syntax, or plain text with literal: true.' },
      path: { ...PATH_PROPERTY, default: '.', description: 'File or folder to search; default the root of the resource.' },
      resource: RESOURCE_PROPERTY,
      glob: { type: 'string', minLength: 1, description: 'Only files whose path relative to path matches this glob.' },
      literal: { type: 'boolean', default: false },
      ignoreCase: { type: 'boolean', default: false },
      dot: { type: 'boolean', default: false, description: 'Also search files and folders whose names start with a dot.' },
      maxMatches: { type: 'integer', minimum: 1, description: 'Most matches to return (capped by the adapter settings).' },
    },
    required: ['pattern'],
    additionalProperties: false,
  }),
  outputSchema: schema({
    type: 'object',
    properties: {
      matches: {
        type: 'array',
        items: {
          type: 'object',
          properties: { path: { type: 'string' }, line: { type: 'integer', minimum: 1 }, text: { type: 'string' } },
          required: ['path', 'line', 'text'],
          additionalProperties: false,
        },
      },
      filesSearched: { type: 'integer', minimum: 0 },
      truncated: { type: 'boolean' },
    },
    required: ['matches', 'filesSearched', 'truncated'],
    additionalProperties: false,
  }),
  async run(input, call) {
    const source = input['pattern'];
    if (typeof source !== 'string' || source.length === 0) throw call.fail('BUILTIN_INVALID_INPUT', 'needs a non-empty "pattern".');
    // The model chooses the pattern: it runs on a linear-time engine, so no pattern can stall the process on a long line.
    let expression: LinearPattern;
    try {
      const text = input['literal'] === true ? source.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : source;
      expression = compileLinearPattern(text, { syntax: 're2', ignoreCase: input['ignoreCase'] === true });
    } catch (error) {
      if (!PatternCompileError.isInstance(error)) throw error;
      const problem =
        error.problem === 'unsupported'
          ? `uses ${error.detail}, which the linear-time engine cannot run; patterns are RE2 syntax, without lookaround or backreferences: rewrite it`
          : `is not valid RE2 syntax (${error.detail}); fix it`;
      throw call.fail('BUILTIN_INVALID_INPUT', `got a pattern that ${problem}, or pass literal: true to search for plain text.`, undefined, error);
    }
    const guarded = await call.guard({ path: input['path'] as string | undefined, resource: input['resource'] as string | undefined, access: 'read' });
    const { grepMaxMatches, grepMaxLineLength, walkMaxEntries } = call.settings.files;
    const maxMatches = Math.min(typeof input['maxMatches'] === 'number' ? input['maxMatches'] : grepMaxMatches, grepMaxMatches);
    const dot = input['dot'] === true;
    const fileFilter = typeof input['glob'] === 'string' ? picomatch(input['glob'], { dot }) : undefined;
    const search = { expression, maxMatches, maxLineLength: grepMaxLineLength, matches: [] as GrepMatch[], truncated: false };
    let filesSearched = 0;
    if ((await lstat(guarded.path).catch(() => undefined))?.isDirectory() !== true) {
      // One file: opened like read opens it, so a folder, FIFO or device gets its coded refusal.
      await searchFile(await openConfinedFile(guarded.confined), search, call);
      filesSearched = 1;
    } else {
      const progress: WalkProgress = { visited: 0, stoppedAtLimit: false };
      const hidden = (relative: string): boolean => !dot && relative.split('/').some((segment) => segment.startsWith('.'));
      for await (const entry of walk(guarded.confined, { check: () => call.checkCancelled(), maxEntries: walkMaxEntries, progress })) {
        if (entry.type !== 'file' || hidden(entry.relative)) continue;
        if (fileFilter !== undefined && !fileFilter(entry.relative)) continue;
        let file: ConfinedFile;
        try {
          file = await entry.folder.openFile(entry.name);
        } catch {
          continue; // vanished, unreadable, or no longer a regular file: not a match
        }
        filesSearched++;
        await searchFile(file, search, call);
        if (search.truncated) break;
      }
      if (progress.stoppedAtLimit) search.truncated = true;
    }
    return toolSuccess({ matches: search.matches, filesSearched, truncated: search.truncated });
  },
};

interface Search {
  readonly expression: LinearPattern;
  readonly maxMatches: number;
  readonly maxLineLength: number;
  readonly matches: GrepMatch[];
  truncated: boolean;
}

async function searchFile(file: ConfinedFile, search: Search, call: ToolCall): Promise<void> {
  const { handle, path } = file;
  try {
    const sniff = Buffer.alloc(BINARY_SNIFF_BYTES);
    const { bytesRead } = await handle.read(sniff, 0, sniff.length, 0);
    if (sniff.subarray(0, bytesRead).includes(0)) return;
    const lines = readLines(handle, { maxLineBytes: MAX_MATCHED_LINE_BYTES, check: () => call.checkCancelled() });
    for await (const line of lines) {
      const text = line.bytes.toString('utf8').replace(/\r?\n$/, '');
      if (!search.expression.test(text)) continue;
      if (search.matches.length === search.maxMatches) {
        search.truncated = true;
        return;
      }
      search.matches.push({ path, line: line.index + 1, text: text.length > search.maxLineLength ? text.slice(0, search.maxLineLength) : text });
    }
  } finally {
    await file.close();
  }
}

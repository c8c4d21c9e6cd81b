import { openConfinedFile } from '@ca/tool-context';
import { toolSuccess } from '@ca/tool-lifecycle';
import { schema, type BuiltinToolSpec, type ToolCall } from '../builtin-tool';
import { readLines } from '../line-reader';
import { PATH_PROPERTY, RESOURCE_PROPERTY } from './common';

/** Output of `builtin.fs.read`. */
export interface ReadOutput {
  readonly path: string;
  readonly resource: string;
  readonly unit: 'lines' | 'bytes';
  readonly encoding: 'utf8' | 'base64';
  readonly content: string;
  readonly offset: number;
  /** Lines (unit `lines`) or bytes (unit `bytes`) returned. */
  readonly count: number;
  readonly totalBytes: number;
  /** Offset to pass to read on; absent at the end of the file. */
  readonly nextOffset?: number;
  /** A line was cut or the result stopped at the byte limit rather than at `limit`. */
  readonly truncated: boolean;
}

/** `builtin.fs.read`: a range of lines or bytes of one file, never the whole file in memory. */
export const readTool: BuiltinToolSpec = {
  name: 'builtin.fs.read',
  description:
    'Read part of a file inside the bound resources. By default returns up to 2,000 lines from the start as UTF-8 text, exactly as stored (line endings kept). ' +
    'Use offset/limit to page: with unit "lines" offset is the number of lines to skip (0 = first line); with unit "bytes" it is a byte position and encoding "base64" reads binary data. ' +
    'When nextOffset is present there is more; call again with offset = nextOffset. Output is capped in bytes; truncated says when the cap cut the result.',
  capability: { writes: false, checkpointable: true, idempotent: true, openWorld: false },
  inputSchema: schema({
    type: 'object',
    properties: {
      path: PATH_PROPERTY,
      resource: RESOURCE_PROPERTY,
      unit: { enum: ['lines', 'bytes'], default: 'lines', description: 'What offset and limit count.' },
      offset: { type: 'integer', minimum: 0, default: 0, description: 'Lines or bytes to skip from the start.' },
      limit: { type: 'integer', minimum: 1, description: 'Most lines or bytes to return (capped by the adapter settings).' },
      encoding: { enum: ['utf8', 'base64'], default: 'utf8', description: '"base64" only with unit "bytes".' },
    },
    required: ['path'],
    additionalProperties: false,
  }),
  outputSchema: schema({
    type: 'object',
    properties: {
      path: { type: 'string' },
      resource: { type: 'string' },
      unit: { enum: ['lines', 'bytes'] },
      encoding: { enum: ['utf8', 'base64'] },
      content: { type: 'string' },
      offset: { type: 'integer', minimum: 0 },
      count: { type: 'integer', minimum: 0 },
      totalBytes: { type: 'integer', minimum: 0 },
      nextOffset: { type: 'integer', minimum: 0 },
      truncated: { type: 'boolean' },
    },
    required: ['path', 'resource', 'unit', 'encoding', 'content', 'offset', 'count', 'totalBytes', 'truncated'],
    additionalProperties: false,
  }),
  async run(input, call) {
    const unit = input['unit'] === 'bytes' ? 'bytes' : 'lines';
    const encoding = input['encoding'] === 'base64' ? 'base64' : 'utf8';
    const offset = typeof input['offset'] === 'number' ? input['offset'] : 0;
    const limit = typeof input['limit'] === 'number' ? input['limit'] : undefined;
    if (unit === 'lines' && encoding === 'base64') {
      throw call.fail('BUILTIN_INVALID_INPUT', 'cannot read lines as base64; use unit "bytes" for binary data.');
    }
    const guarded = await call.guard({ path: input['path'] as string, resource: input['resource'] as string | undefined, access: 'read' });
    const file = await openConfinedFile(guarded.confined);
    const handle = file.handle;
    try {
      const base = { path: file.path, resource: guarded.resource.id, offset, totalBytes: file.stats.size };
      const output: ReadOutput =
        unit === 'bytes' ? await readBytes(handle, offset, limit, encoding, base, call) : await readLineRange(handle, offset, limit, base, call);
      return toolSuccess(output);
    } finally {
      await file.close();
    }
  },
};

type ReadBase = Pick<ReadOutput, 'path' | 'resource' | 'offset' | 'totalBytes'>;

async function readBytes(
  handle: import('node:fs/promises').FileHandle,
  offset: number,
  limit: number | undefined,
  encoding: 'utf8' | 'base64',
  base: ReadBase,
  call: ToolCall,
): Promise<ReadOutput> {
  const maxBytes = call.settings.files.readMaxBytes;
  const wanted = Math.max(0, Math.min(limit ?? maxBytes, maxBytes, base.totalBytes - offset));
  const buffer = Buffer.alloc(wanted);
  let filled = 0;
  while (filled < wanted) {
    call.checkCancelled();
    const { bytesRead } = await handle.read(buffer, filled, wanted - filled, offset + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  const end = offset + filled;
  return {
    ...base,
    unit: 'bytes',
    encoding,
    content: buffer.subarray(0, filled).toString(encoding),
    count: filled,
    ...(end < base.totalBytes ? { nextOffset: end } : {}),
    truncated: limit !== undefined && limit > maxBytes && end < base.totalBytes,
  };
}

async function readLineRange(
  handle: import('node:fs/promises').FileHandle,
  offset: number,
  limit: number | undefined,
  base: ReadBase,
  call: ToolCall,
): Promise<ReadOutput> {
  const { readMaxBytes, readMaxLines } = call.settings.files;
  const lineLimit = Math.min(limit ?? readMaxLines, readMaxLines);
  const parts: Buffer[] = [];
  let bytes = 0;
  let count = 0;
  let truncated = false;
  let nextOffset: number | undefined;
  const lines = readLines(handle, { maxLineBytes: readMaxBytes, check: () => call.checkCancelled() });
  for await (const line of lines) {
    if (line.index < offset) continue;
    if (count === lineLimit) {
      nextOffset = line.index;
      break;
    }
    if (bytes + line.bytes.length > readMaxBytes && count > 0) {
      nextOffset = line.index;
      truncated = true;
      break;
    }
    parts.push(line.bytes);
    bytes += line.bytes.length;
    count++;
    if (line.bytes.length < line.length) {
      // A single line longer than the byte cap: its head is returned, the reader moves on to the next line.
      truncated = true;
      nextOffset = line.index + 1;
      break;
    }
  }
  if (limit !== undefined && limit > readMaxLines && nextOffset !== undefined) truncated = true;
  return {
    ...base,
    unit: 'lines',
    encoding: 'utf8',
    content: Buffer.concat(parts).toString('utf8'),
    count,
    ...(nextOffset === undefined ? {} : { nextOffset }),
    truncated,
  };
}

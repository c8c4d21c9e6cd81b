import fs from 'node:fs';
import path from 'node:path';
import { CliError } from './cli-error';
import { MAX_DOCUMENT_BYTES } from './read-document';

/** Largest `--input`, inline or from `@file`, in bytes (the same cap as configuration and plan files). */
export const MAX_INPUT_BYTES = MAX_DOCUMENT_BYTES;

const EXAMPLE = `e.g. --input '{"path":"README.md"}', or --input @file.json`;

/**
 * Reads `--input`: JSON text, or `@file` holding JSON text. The file must be
 * a regular file of at most {@link MAX_INPUT_BYTES}: it is opened without
 * blocking (a FIFO with no writer would otherwise hang the command) and
 * checked with `fstat` before anything is read, so `@/dev/zero` or a huge
 * file is refused with a coded error instead of exhausting memory.
 * @throws CliError (CLI_INPUT_INVALID).
 */
export function parseInput(text: string, cwd: string): unknown {
  let source = text;
  let where = '--input';
  if (text.startsWith('@')) {
    const file = path.resolve(cwd, text.slice(1));
    where = `--input ${text}`;
    source = readInputFile(file, where);
  } else if (Buffer.byteLength(text, 'utf8') > MAX_INPUT_BYTES) {
    throw new CliError({
      code: 'CLI_INPUT_INVALID',
      message: `--input is ${Buffer.byteLength(text, 'utf8')} bytes; the limit is ${MAX_INPUT_BYTES}. Pass a smaller input.`,
    });
  }
  try {
    return JSON.parse(source);
  } catch (error) {
    throw new CliError({
      code: 'CLI_INPUT_INVALID',
      message: `${where} is not valid JSON (${(error as Error).message}). Pass a JSON object, ${EXAMPLE}.`,
      cause: error,
    });
  }
}

function readInputFile(file: string, where: string): string {
  let descriptor: number;
  try {
    descriptor = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw new CliError({ code: 'CLI_INPUT_INVALID', cause: error, message: `${where}: cannot read ${file} (${(error as Error).message}). Check the path.` });
  }
  try {
    const stat = fs.fstatSync(descriptor);
    if (!stat.isFile()) {
      throw new CliError({
        code: 'CLI_INPUT_INVALID',
        message: `${where}: ${file} is not a regular file (a device, FIFO or folder); pass a file holding JSON, ${EXAMPLE}.`,
      });
    }
    if (stat.size > MAX_INPUT_BYTES) {
      throw new CliError({
        code: 'CLI_INPUT_INVALID',
        message: `${where}: ${file} is ${stat.size} bytes; the limit is ${MAX_INPUT_BYTES}. Pass a smaller input.`,
      });
    }
    // One byte more than fstat reported: a file that grows meanwhile is noticed, and never read past the limit.
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_INPUT_BYTES) + 1);
    let length = 0;
    for (;;) {
      const read = fs.readSync(descriptor, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length === buffer.length) break;
    }
    if (length > stat.size) {
      throw new CliError({ code: 'CLI_INPUT_INVALID', message: `${where}: ${file} grew while it was read; pass a file that is not being written.` });
    }
    return buffer.toString('utf8', 0, length);
  } catch (error) {
    if (CliError.isInstance(error)) throw error;
    throw new CliError({ code: 'CLI_INPUT_INVALID', cause: error, message: `${where}: cannot read ${file} (${(error as Error).message}).` });
  } finally {
    fs.closeSync(descriptor);
  }
}

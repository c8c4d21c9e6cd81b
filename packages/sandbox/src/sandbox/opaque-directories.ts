import { readFile, rm } from 'node:fs/promises';
import { runProcess } from '../process';

/** The extended attribute overlayfs sets, in a user namespace (`userxattr`), on an upper folder that hides the lower one. */
const OPAQUE_ATTRIBUTE = 'user.overlay.opaque';
const PAX_OPAQUE_KEY = `SCHILY.xattr.${OPAQUE_ATTRIBUTE}`;
const BLOCK = 512;

/**
 * @internal Which of the folders `relativePaths` (below `upper`) are opaque:
 * removed and made again by the program, so nothing of the lower folder shows
 * through. Node cannot read extended attributes, so GNU tar reads them: it
 * writes a header (no content: folders only, `--no-recursion`) for each
 * folder, preceded by a POSIX extended header that lists its attributes, to
 * `archivePath`, which is read back as bytes.
 *
 * @throws Error when tar fails or writes what is not a tar stream.
 */
export async function findOpaqueDirectories(
  tarPath: string,
  upper: string,
  relativePaths: readonly string[],
  archivePath: string,
  signal?: AbortSignal,
): Promise<Set<string>> {
  const opaque = new Set<string>();
  if (relativePaths.length === 0) return opaque;
  const result = await runProcess({
    command: tarPath,
    // Names come on stdin, NUL-separated and verbatim: a folder named like an option stays a name.
    args: [
      '--format=posix',
      '--xattrs',
      `--xattrs-include=${OPAQUE_ATTRIBUTE}`,
      '--no-recursion',
      '-c',
      '-f',
      archivePath,
      '-C',
      upper,
      '--null',
      '--verbatim-files-from',
      '-T',
      '-',
    ],
    inheritEnv: [],
    env: { LC_ALL: 'C' },
    stdin: relativePaths.map((path) => `./${path}`).join('\0') + '\0',
    maxStdoutBytes: 16 * 1024,
    maxStderrBytes: 16 * 1024,
    timeoutMs: 120_000,
    ...(signal === undefined ? {} : { signal }),
  });
  if (result.exitCode !== 0) {
    throw new Error(
      `tar could not read the folders' attributes (${result.cancelled ? 'cancelled' : result.timedOut ? 'timed out' : `exit ${String(result.exitCode ?? result.signal)}`}): ${result.stderr.text.trim().slice(0, 500)}`,
    );
  }
  try {
    for (const entry of readTarEntries(await readFile(archivePath))) {
      if (entry.type === '5' && entry.attributes.get(PAX_OPAQUE_KEY) === 'y') opaque.add(normaliseName(entry.name));
    }
  } finally {
    await rm(archivePath, { force: true });
  }
  return opaque;
}

interface TarEntry {
  readonly name: string;
  readonly type: string;
  readonly attributes: ReadonlyMap<string, string>;
}

/** @internal The entries of a tar stream with their POSIX extended attributes (`x` headers apply to the next entry). */
export function readTarEntries(archive: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  let pending = new Map<string, string>();
  for (let offset = 0; offset + BLOCK <= archive.length;) {
    const header = archive.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const size = parseInt(field(header, 124, 12) || '0', 8);
    if (!Number.isSafeInteger(size) || size < 0) throw new Error('tar wrote a header with an unreadable size');
    const type = String.fromCharCode(header[156] ?? 0x30);
    const dataStart = offset + BLOCK;
    const data = archive.subarray(dataStart, dataStart + size);
    if (data.length < size) throw new Error('tar output ended inside an entry');
    offset = dataStart + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x') {
      pending = parsePaxRecords(data);
      continue;
    }
    if (type === 'g') continue;
    const prefix = field(header, 345, 155);
    const shortName = field(header, 0, 100);
    const name = pending.get('path') ?? (prefix.length > 0 ? `${prefix}/${shortName}` : shortName);
    entries.push({ name, type, attributes: pending });
    pending = new Map();
  }
  return entries;
}

/** Records `"<length> <key>=<value>\n"`, the length counting the whole record in bytes. */
function parsePaxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  for (let offset = 0; offset < data.length;) {
    const space = data.indexOf(0x20, offset);
    if (space === -1) break;
    const length = parseInt(data.toString('latin1', offset, space), 10);
    if (!Number.isSafeInteger(length) || length <= 0 || offset + length > data.length) throw new Error('tar wrote an unreadable extended header');
    const record = data.toString('utf8', space + 1, offset + length - 1);
    const equals = record.indexOf('=');
    if (equals > 0) records.set(record.slice(0, equals), record.slice(equals + 1));
    offset += length;
  }
  return records;
}

function field(header: Buffer, start: number, length: number): string {
  const raw = header.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.toString('utf8', 0, end === -1 ? raw.length : end).trim();
}

function normaliseName(name: string): string {
  return name.replace(/^\.\//, '').replace(/\/+$/, '');
}

import { existsSync, promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { nodeSkillsFileSystem, type SkillsFileHandle, type SkillsFileSystem } from './skills-file-system';

/** A skills fixture kept in the repository (`src/__fixtures__/<name>`, see its SOURCE.md). */
export function sharedFixture(name: 'agent-skills' | 'agent-skills-invalid'): string {
  const path = join(__dirname, '__fixtures__', name);
  if (!existsSync(path)) {
    throw new Error(`Skills fixture folder '${path}' is missing: it is part of the repository; restore it with git checkout -- ${path}.`);
  }
  return path;
}

/** A new empty folder under the OS temp folder. */
export function makeTempDir(): Promise<string> {
  return fs.mkdtemp(join(tmpdir(), 'ca-skills-'));
}

/** Removes a temp folder made by {@link makeTempDir}. */
export async function removeTempDir(path: string | undefined): Promise<void> {
  if (path !== undefined) await fs.rm(path, { recursive: true, force: true });
}

/** Copies a fixture tree and makes the copy writable (the shared fixtures are read-only). */
export async function copyTree(from: string, to: string): Promise<void> {
  await fs.cp(from, to, { recursive: true });
  const walk = async (path: string): Promise<void> => {
    const stats = await fs.lstat(path);
    if (stats.isSymbolicLink()) return;
    await fs.chmod(path, stats.mode | 0o200);
    if (stats.isDirectory()) for (const entry of await fs.readdir(path)) await walk(join(path, entry));
  };
  await walk(to);
}

/** Writes `<root>/<folder>/SKILL.md` (and extra files) and returns the folder. */
export async function writeSkill(
  root: string,
  folder: string,
  skillFile: string | Buffer,
  files: Readonly<Record<string, string | Buffer>> = {},
): Promise<string> {
  const path = join(root, folder);
  await fs.mkdir(path, { recursive: true });
  await fs.writeFile(join(path, 'SKILL.md'), skillFile);
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(dirname(join(path, name)), { recursive: true });
    await fs.writeFile(join(path, name), content);
  }
  return path;
}

/** A `SKILL.md` with the given frontmatter lines and body. */
export function skillMarkdown(frontmatter: Readonly<Record<string, string>>, body = '# Instructions\n\nDo the thing.\n'): string {
  const lines = Object.entries(frontmatter).map(([key, value]) => `${key}: ${value}`);
  return `---\n${lines.join('\n')}\n---\n\n${body}`;
}

/** The node file system, counting what is opened and read, per path. */
export interface CountingFileSystem extends SkillsFileSystem {
  readonly opened: string[];
  readonly bytesRead: Map<string, number>;
  readonly realpaths: string[];
  totalBytesRead(): number;
}

/** Wraps the node file system so tests can see which files are opened and how many bytes are read. */
export function countingFileSystem(base: SkillsFileSystem = nodeSkillsFileSystem): CountingFileSystem {
  const opened: string[] = [];
  const realpaths: string[] = [];
  const bytesRead = new Map<string, number>();
  return {
    opened,
    realpaths,
    bytesRead,
    totalBytesRead: () => [...bytesRead.values()].reduce((sum, value) => sum + value, 0),
    readdir: (path) => base.readdir(path),
    stat: (path) => base.stat(path),
    realpath: (path) => {
      realpaths.push(path);
      return base.realpath(path);
    },
    open: async (path, root) => {
      const handle = await base.open(path, root);
      opened.push(path);
      const counted: SkillsFileHandle = {
        read: async (buffer, offset, length, position) => {
          const result = await handle.read(buffer, offset, length, position);
          bytesRead.set(path, (bytesRead.get(path) ?? 0) + result.bytesRead);
          return result;
        },
        stat: () => handle.stat(),
        close: () => handle.close(),
      };
      return counted;
    },
  };
}

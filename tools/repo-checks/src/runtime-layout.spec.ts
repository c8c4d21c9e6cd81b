import fs from 'node:fs';
import path from 'node:path';

// The runtime's source shows its pipeline: `tool-runtime.ts` reads as the
// steps of `execute`, each a call into the folder of its concern, and each
// folder is entered through one file. A runtime file that grows back into a
// catch-all, or a folder reached around its entry, fails here.
const workspaceRoot = path.resolve(__dirname, '..', '..', '..');
const sourceRoot = path.join(workspaceRoot, 'packages', 'tool-lifecycle', 'src');
const MAX_RUNTIME_LINES = 450;

function sourceFiles(folder: string): string[] {
  return fs
    .readdirSync(folder, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? sourceFiles(path.join(folder, entry.name)) : [path.join(folder, entry.name)]))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts') && !file.endsWith('.test-helper.ts'));
}

const folders = fs
  .readdirSync(sourceRoot, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== '__fixtures__')
  .map((entry) => entry.name);

describe('the layout of @ca/tool-lifecycle', () => {
  it(`keeps tool-runtime.ts at most ${MAX_RUNTIME_LINES} lines`, () => {
    const lines = fs.readFileSync(path.join(sourceRoot, 'tool-runtime.ts'), 'utf8').split('\n').length;
    expect(lines).toBeLessThanOrEqual(MAX_RUNTIME_LINES);
  });

  it('has the folders of its concerns, and no sources of the process runner or the sandbox', () => {
    expect(folders).toEqual(expect.arrayContaining(['approval', 'calls', 'catalog', 'errors', 'observability', 'plan', 'plan-registry', 'tool']));
    expect(folders).not.toContain('process');
    expect(folders).not.toContain('sandbox');
  });

  it.each(folders.filter((folder) => folder !== 'deprecated'))('%s/ has one entry file, index.ts', (folder) => {
    expect(fs.existsSync(path.join(sourceRoot, folder, 'index.ts'))).toBe(true);
  });

  it('reaches another folder only through its entry file', () => {
    const deepImports: string[] = [];
    for (const file of sourceFiles(sourceRoot)) {
      const text = fs.readFileSync(file, 'utf8');
      for (const match of text.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
        const target = path.relative(sourceRoot, path.resolve(path.dirname(file), match[1]!));
        const [targetFolder, ...rest] = target.split(path.sep);
        const fromFolder = path.relative(sourceRoot, path.dirname(file)).split(path.sep)[0];
        if (rest.length > 0 && targetFolder !== fromFolder && targetFolder !== 'deprecated' && rest.join('/') !== 'index') {
          deepImports.push(`${path.relative(sourceRoot, file)} imports ${match[1]}`);
        }
      }
    }
    expect(deepImports).toEqual([]);
  });
});

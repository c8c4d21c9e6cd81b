import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// End to end: `nx g @ca/workspace-plugin:adapter` through the real Nx CLI,
// then the generated package must build, lint, type-check and pass its own
// tests, and pack into a publishable tarball.
//
// It runs in a throw-away copy of the workspace (root configuration, the core
// packages' sources, node_modules linked), never in the real one: other
// projects' tasks and other people's `nx` runs must not see a half-made
// package, and a crash must not leave one behind. The copy is removed in
// afterAll whatever happens.

const workspaceRoot = path.resolve(__dirname, '..', '..', '..', '..', '..');
const nxBin = path.join(workspaceRoot, 'node_modules', 'nx', 'dist', 'bin', 'nx.js');
// tools/scripts/build-package.js: the build target of nx.json runs it.
const ROOT_FILES = ['package.json', 'nx.json', 'tsconfig.base.json', 'jest.preset.js', 'eslint.config.mjs', 'LICENSE', 'tools/scripts/build-package.js'];
// @ca/sandbox: the runtime builds its deprecated /process and /sandbox re-exports from it.
const CORE_PACKAGES = ['domain', 'schema', 'tool-context', 'sandbox', 'tool-lifecycle'];
const SKIPPED_FOLDERS = new Set(['dist', 'node_modules', 'coverage', '.nx']);
const NAME = 'e2e-sample';
const PACKAGE = `@ca/adapters-${NAME}`;

let copyRoot: string;

/** Environment for a nested Nx or npm: none of the outer Nx task's, Jest worker's or npm script's variables leak in. */
function cleanEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // npm_config_local_prefix and friends (set by `npm test`) would point npm at the real workspace.
    if (/^(NX_|JEST_|npm_|NPM_CONFIG_)/i.test(key) || key === 'NODE_OPTIONS' || key === 'INIT_CWD') continue;
    env[key] = value;
  }
  return { ...env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', NX_SKIP_NX_CACHE: 'true', CI: 'true', FORCE_COLOR: '0' };
}

function run(command: string, args: readonly string[], cwd: string, timeoutMs = 240_000): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, env: cleanEnvironment(), encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
}

/** Fails the test with the command's whole output unless it exited with 0. */
function expectSuccess(result: SpawnSyncReturns<string>, what: string): void {
  if (result.status === 0) return;
  throw new Error(
    `${what} failed: exit ${result.status}${result.signal ? ` (signal ${result.signal})` : ''}${result.error ? ` (${result.error.message})` : ''}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`,
  );
}

function makeWorkspaceCopy(): string {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-adapter-e2e-'));
  for (const file of ROOT_FILES) {
    fs.mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    fs.copyFileSync(path.join(workspaceRoot, file), path.join(copy, file));
  }
  for (const name of CORE_PACKAGES) {
    const from = path.join(workspaceRoot, 'packages', name);
    fs.cpSync(from, path.join(copy, 'packages', name), {
      recursive: true,
      filter: (source) => !SKIPPED_FOLDERS.has(path.basename(source)) || source === from,
    });
  }
  // node_modules: every installed package linked from the real workspace,
  // except the workspace's own @ca packages, which point into the copy.
  const realModules = path.join(workspaceRoot, 'node_modules');
  const modules = path.join(copy, 'node_modules');
  fs.mkdirSync(path.join(modules, '@ca'), { recursive: true });
  for (const entry of fs.readdirSync(realModules)) {
    if (entry === '@ca' || entry === '.cache') continue;
    fs.symlinkSync(path.join(realModules, entry), path.join(modules, entry));
  }
  for (const name of CORE_PACKAGES) fs.symlinkSync(path.join(copy, 'packages', name), path.join(modules, '@ca', name), 'dir');
  // The plugin under test, as `npm install` links it in the real workspace.
  fs.symlinkSync(path.join(workspaceRoot, 'tools', 'workspace-plugin'), path.join(modules, '@ca', 'workspace-plugin'), 'dir');
  return copy;
}

describe('nx g @ca/workspace-plugin:adapter (end to end)', () => {
  beforeAll(() => {
    copyRoot = makeWorkspaceCopy();
  });

  afterAll(() => {
    if (copyRoot !== undefined) fs.rmSync(copyRoot, { recursive: true, force: true });
  });

  it('generates an adapter that builds, lints, type-checks, passes its own tests and packs for publishing', () => {
    const generate = run(process.execPath, [nxBin, 'g', '@ca/workspace-plugin:adapter', NAME, '--no-interactive'], copyRoot);
    expectSuccess(generate, 'generate');

    const packageRoot = path.join(copyRoot, 'packages', `adapters-${NAME}`);
    expect(fs.existsSync(path.join(packageRoot, 'src', `${NAME}-tool-source.ts`))).toBe(true);
    // The workspace maps @ca/* already: nothing outside the new folder changes.
    for (const file of ROOT_FILES) {
      expect([file, fs.readFileSync(path.join(copyRoot, file), 'utf8')]).toEqual([file, fs.readFileSync(path.join(workspaceRoot, file), 'utf8')]);
    }

    const project = run(process.execPath, [nxBin, 'show', 'project', PACKAGE, '--json'], copyRoot);
    expectSuccess(project, 'project');
    const shown = JSON.parse(project.stdout);
    expect([...shown.tags].sort()).toEqual(['layer:adapter', 'npm:public', 'scope:adapter']);
    expect(Object.keys(shown.targets)).toEqual(expect.arrayContaining(['build', 'lint', 'typecheck', 'test', 'nx-release-publish']));

    const tasks = run(
      process.execPath,
      [nxBin, 'run-many', '-t', 'build', 'lint', 'typecheck', 'test', '-p', PACKAGE, '--outputStyle=static', '--parallel=2'],
      copyRoot,
    );
    expectSuccess(tasks, 'tasks');
    expect(tasks.stdout).toMatch(/Tests:\s+\d+ passed, \d+ total/);
    expect(tasks.stdout).not.toMatch(/Tests:.*(failed|skipped)/);

    // The build is a CommonJS package with declarations that loads through its own exports: a ToolSet of
    // the adapter's own kind, whose unknown names are the runtime's ToolNotFoundError, and a CaError.
    const script = `
      const adapter = require(${JSON.stringify(packageRoot)});
      const source = adapter.createE2eSampleAdapter();
      let missing;
      try { source.get('${NAME}.pin'); } catch (error) { missing = [error.name, error.code, error.suggestions]; }
      let invalid;
      try { adapter.createE2eSampleAdapter({ id: '' }); } catch (error) { invalid = [error.name, error.code, error.problem, adapter.E2eSampleAdapterError.isInstance(error), error.message]; }
      console.log(JSON.stringify({ names: Object.keys(adapter).sort(), kind: source.kind, missing, invalid }));
    `;
    const load = run(process.execPath, ['-e', script], copyRoot);
    expectSuccess(load, 'load');
    expect(JSON.parse(load.stdout)).toEqual({
      names: ['E2E_SAMPLE_TOOL_NAMES', 'E2eSampleAdapterError', 'E2eSampleToolSource', 'createE2eSampleAdapter', 'registerE2eSampleAdapter'],
      kind: NAME,
      missing: ['ToolNotFoundError', 'TOOL_NOT_FOUND', [`${NAME}.ping`]],
      invalid: [
        'E2eSampleAdapterError',
        'E2E_SAMPLE_INVALID_SETTINGS',
        'invalid-setting',
        true,
        "createE2eSampleAdapter(settings): id must be a non-empty string; got ''.",
      ],
    });

    const pack = run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], packageRoot, 60_000);
    expectSuccess(pack, 'pack');
    const [tarball] = JSON.parse(pack.stdout) as { name: string; version: string; files: { path: string }[] }[];
    const packed = tarball!.files.map((file) => file.path);
    expect(tarball).toMatchObject({ name: PACKAGE, version: '0.1.0' });
    expect(packed).toEqual(
      expect.arrayContaining([
        'README.md',
        'CHANGELOG.md',
        'LICENSE',
        'package.json',
        'dist/index.js',
        'dist/index.d.ts',
        `dist/register-${NAME}-adapter.js`,
        'src/index.ts',
        `src/register-${NAME}-adapter.ts`,
      ]),
    );
    expect(packed.filter((file) => /\.spec\.|__fixtures__|\.test-helper\./.test(file))).toEqual([]);
    expect(fs.readFileSync(path.join(packageRoot, 'LICENSE'), 'utf8')).toBe(fs.readFileSync(path.join(workspaceRoot, 'LICENSE'), 'utf8'));
    // Every source map and declaration map names sources that are in the tarball.
    const dangling: string[] = [];
    for (const file of packed.filter((candidate) => candidate.endsWith('.map'))) {
      const map = JSON.parse(fs.readFileSync(path.join(packageRoot, file), 'utf8')) as { sourceRoot?: string; sources: string[] };
      for (const source of map.sources) {
        const resolved = path.posix.join(path.posix.dirname(file), map.sourceRoot ?? '', source);
        if (!packed.includes(resolved)) dangling.push(`${file} -> ${resolved}`);
      }
    }
    expect(packed.filter((file) => file.endsWith('.map')).length).toBeGreaterThan(0);
    expect(dangling).toEqual([]);
  });
});

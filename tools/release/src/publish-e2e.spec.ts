import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

// End to end: build every @ca package, publish it with `nx release publish`
// to a local Verdaccio (127.0.0.1, storage in a temporary folder), check what
// each tarball ships (LICENSE, CHANGELOG.md, repository, sources for the
// source maps), then in a fresh project install only @ca/tool-lifecycle and
// @ca/adapters-builtin from that registry and run a plan from CommonJS and
// from an ES module; then add @ca/adapters-mcp alone and check it shares the
// one copy of the core.
//
// Needs registry.npmjs.org for third-party packages (tsyringe, ajv, the MCP
// SDK, …): the consumer gets @ca/* from Verdaccio by scope and the rest from
// npm. The registry is stopped and every temporary folder removed in afterAll.

const workspaceRoot = path.resolve(__dirname, '..', '..', '..');
const nxBin = path.join(workspaceRoot, 'node_modules', 'nx', 'dist', 'bin', 'nx.js');
const fixtures = path.join(__dirname, '__fixtures__', 'consumer');
const NOTE = 'written by the release e2e test\n';

interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly private?: boolean;
  readonly exports?: Record<string, unknown>;
}

/**
 * References from the files of an unpacked package to files that are not in
 * it: a `sourceMappingURL` comment naming a missing map, or a map (source map
 * or declaration map) naming a missing source.
 */
function danglingSourceMapReferences(packageFolder: string, files: readonly string[]): string[] {
  const present = new Set(files);
  const dangling: string[] = [];
  for (const file of files) {
    if (file.endsWith('.map')) {
      const map = JSON.parse(fs.readFileSync(path.join(packageFolder, file), 'utf8')) as { sourceRoot?: string; sources?: string[] };
      for (const source of map.sources ?? []) {
        const resolved = path.posix.join(path.posix.dirname(file), map.sourceRoot ?? '', source);
        if (!present.has(resolved)) dangling.push(`${file} names ${resolved}`);
      }
    } else if (/\.(c|m)?js$|\.d\.ts$/.test(file)) {
      const reference = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(fs.readFileSync(path.join(packageFolder, file), 'utf8'));
      if (reference && !reference[1]!.startsWith('data:')) {
        const resolved = path.posix.join(path.posix.dirname(file), reference[1]!);
        if (!present.has(resolved)) dangling.push(`${file} names ${resolved}`);
      }
    }
  }
  return dangling;
}

const publishable: Manifest[] = fs
  .readdirSync(path.join(workspaceRoot, 'packages'))
  .map((folder) => path.join(workspaceRoot, 'packages', folder, 'package.json'))
  .filter((file) => fs.existsSync(file))
  .map((file) => JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest)
  .filter((manifest) => manifest.private !== true);

let tempRoot: string;
let registry: ChildProcess | undefined;
let registryUrl: string;
let consumer: string;
let dataFolder: string;
let userConfig: string;

/**
 * Environment for nested `nx` and `npm`: nothing of an outer Nx task, Jest
 * worker or `npm test` (npm_config_local_prefix would send installs to the
 * workspace) leaks in, and npm reads only our user config (the test
 * registry's token), never the developer's ~/.npmrc.
 */
function environment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(NX_|JEST_|npm_|NPM_CONFIG_)/i.test(key) || key === 'NODE_OPTIONS' || key === 'INIT_CWD') continue;
    env[key] = value;
  }
  return {
    ...env,
    NX_DAEMON: 'false',
    NX_NO_CLOUD: 'true',
    NX_TUI: 'false',
    CI: 'true',
    FORCE_COLOR: '0',
    NPM_CONFIG_USERCONFIG: userConfig,
    NPM_CONFIG_UPDATE_NOTIFIER: 'false',
    NPM_CONFIG_FUND: 'false',
    NPM_CONFIG_AUDIT: 'false',
  };
}

function run(command: string, args: readonly string[], cwd: string, timeoutMs = 240_000): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, env: environment(), encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
}

/** Fails with the command's whole output unless it exited with 0; returns its stdout. */
function succeed(result: SpawnSyncReturns<string>, what: string): string {
  if (result.status === 0) return result.stdout;
  throw new Error(
    `${what} failed: exit ${result.status}${result.signal ? ` (signal ${result.signal})` : ''}${result.error ? ` (${result.error.message})` : ''}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`,
  );
}

/** The last line of output that parses as a JSON object (the scripts print one report). */
function report(stdout: string): Record<string, any> {
  const line = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((candidate) => candidate.startsWith('{'));
  if (line === undefined) throw new Error(`No JSON report in:\n${stdout}`);
  return JSON.parse(line);
}

async function startRegistry(storage: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [path.join(workspaceRoot, 'tools', 'release', 'start-registry.js'), '--storage', storage], {
    env: environment(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = readline.createInterface({ input: child.stdout! });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Verdaccio did not start within 60 s.\n${stderr}`)), 60_000);
      child.once('exit', (code) => reject(new Error(`Verdaccio exited with ${code} before listening.\n${stderr}`)));
      lines.on('line', (line) => {
        if (!line.startsWith('{')) return;
        clearTimeout(timer);
        resolve((JSON.parse(line) as { url: string }).url);
      });
    });
    return { child, url };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

async function stopRegistry(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

async function packument(name: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${registryUrl}${name.replace('/', '%2f')}`);
  return { status: response.status, body: response.status === 200 ? await response.json() : undefined };
}

function copyFixture(file: string): void {
  fs.copyFileSync(path.join(fixtures, file), path.join(consumer, file));
}

function installedCopies(name: string): string[] {
  const found: string[] = [];
  const visit = (folder: string): void => {
    const modules = path.join(folder, 'node_modules');
    if (!fs.existsSync(modules)) return;
    for (const entry of fs.readdirSync(modules)) {
      const candidates = entry.startsWith('@')
        ? fs.readdirSync(path.join(modules, entry)).map((child) => path.join(modules, entry, child))
        : [path.join(modules, entry)];
      for (const candidate of candidates) {
        const manifest = path.join(candidate, 'package.json');
        if (fs.existsSync(manifest) && (JSON.parse(fs.readFileSync(manifest, 'utf8')) as Manifest).name === name) found.push(candidate);
        visit(candidate);
      }
    }
  };
  visit(consumer);
  return found;
}

describe('publishing every @ca package and consuming it from a private registry', () => {
  beforeAll(async () => {
    tempRoot = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ca-release-e2e-')));
    consumer = path.join(tempRoot, 'consumer');
    dataFolder = path.join(tempRoot, 'data');
    userConfig = path.join(tempRoot, 'npmrc');
    fs.mkdirSync(consumer);
    fs.mkdirSync(dataFolder);
    fs.writeFileSync(path.join(dataFolder, 'note.txt'), NOTE);
    fs.writeFileSync(userConfig, '');

    const started = await startRegistry(path.join(tempRoot, 'registry'));
    registry = started.child;
    registryUrl = started.url;
    // npm will not publish without a token, even where the registry lets anyone publish.
    const host = registryUrl.replace(/^http:/, '');
    fs.writeFileSync(userConfig, `${host}:_authToken=release-e2e-local-token\n`);

    // Run as the project's Nx task (`npm test`), the packages were built just
    // before (the test target depends on their builds); building them again
    // here would rewrite dist/ folders that other projects' tests, running at
    // the same time, are loading. Run on its own (`npx jest`), it builds them.
    if (process.env.NX_TASK_TARGET_PROJECT !== '@ca/release-e2e') {
      succeed(
        run(process.execPath, [nxBin, 'run-many', '-t', 'build', '--projects=tag:npm:public', '--outputStyle=static'], workspaceRoot),
        'nx run-many -t build',
      );
    }
    succeed(run(process.execPath, [nxBin, 'release', 'publish', `--registry=${registryUrl}`, '--tag=latest'], workspaceRoot), 'nx release publish');
  });

  afterAll(async () => {
    if (registry !== undefined) await stopRegistry(registry);
    if (tempRoot !== undefined) fs.rmSync(tempRoot, { recursive: true, force: true });
  });

  it('publishes every package of packages/*: built CommonJS with declarations, README, exports, no tests or fixtures', async () => {
    expect(publishable.map((manifest) => manifest.name)).toEqual(
      expect.arrayContaining(['@ca/domain', '@ca/schema', '@ca/tool-context', '@ca/sandbox', '@ca/tool-lifecycle', '@ca/adapters-builtin', '@ca/adapters-mcp']),
    );
    for (const manifest of publishable) {
      const { status, body } = await packument(manifest.name);
      expect([manifest.name, status]).toEqual([manifest.name, 200]);
      expect([manifest.name, body['dist-tags'].latest]).toEqual([manifest.name, manifest.version]);
      const published = body.versions[manifest.version];
      expect(published.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });

      const tarball = path.join(tempRoot, `${manifest.name.replace('/', '-')}.tgz`);
      fs.writeFileSync(tarball, Buffer.from(await (await fetch(published.dist.tarball)).arrayBuffer()));
      const files = succeed(run('tar', ['-tzf', tarball], tempRoot, 30_000), `tar -tzf ${tarball}`)
        .trim()
        .split('\n');
      expect([manifest.name, files]).toEqual([
        manifest.name,
        expect.arrayContaining(['package/package.json', 'package/README.md', 'package/dist/index.js', 'package/dist/index.d.ts']),
      ]);
      expect([manifest.name, files.filter((file) => /\.spec\.|__fixtures__|\.test-helper\./.test(file))]).toEqual([manifest.name, []]);
    }
  });

  it('ships in every tarball the LICENSE of the repository, a CHANGELOG.md, the repository, and source maps that resolve inside the tarball', async () => {
    const rootLicense = fs.readFileSync(path.join(workspaceRoot, 'LICENSE'), 'utf8');
    for (const manifest of publishable) {
      const published = (await packument(manifest.name)).body.versions[manifest.version];
      expect([manifest.name, published.license, published.repository]).toEqual([
        manifest.name,
        'MIT',
        expect.objectContaining({ type: 'git', url: expect.stringMatching(/^git\+https:\/\//), directory: `packages/${manifest.name.replace('@ca/', '')}` }),
      ]);

      const unpacked = path.join(tempRoot, 'unpacked', manifest.name.replace('/', '-'));
      fs.mkdirSync(unpacked, { recursive: true });
      fs.writeFileSync(path.join(unpacked, 'package.tgz'), Buffer.from(await (await fetch(published.dist.tarball)).arrayBuffer()));
      succeed(run('tar', ['-xzf', 'package.tgz'], unpacked, 30_000), `tar -xzf (${manifest.name})`);
      const packageFolder = path.join(unpacked, 'package');
      const files = fs
        .readdirSync(packageFolder, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => path.relative(packageFolder, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));

      expect([manifest.name, fs.readFileSync(path.join(packageFolder, 'LICENSE'), 'utf8')]).toEqual([manifest.name, rootLicense]);
      const changelog = fs.readFileSync(path.join(packageFolder, 'CHANGELOG.md'), 'utf8');
      expect([manifest.name, changelog.split('\n')[0]]).toEqual([
        manifest.name,
        expect.stringMatching(new RegExp(`^## ${manifest.version.replace(/\./g, '\\.')}( |$)`)),
      ]);
      // The maps name ../src/*.ts: the sources are shipped (without tests), and nothing they name is missing.
      expect([manifest.name, files]).toEqual([manifest.name, expect.arrayContaining(['src/index.ts', 'dist/index.js.map', 'dist/index.d.ts.map'])]);
      expect([manifest.name, danglingSourceMapReferences(packageFolder, files)]).toEqual([manifest.name, []]);
    }
  });

  it('keeps @ca packages local: an unknown @ca name is not looked up on the public registry', async () => {
    expect((await packument('@ca/does-not-exist-e2e')).status).toBe(404);
  });

  it('installs @ca/tool-lifecycle alone without @ca/sandbox: a service that starts no program does not get it', () => {
    const lean = path.join(tempRoot, 'lean');
    fs.mkdirSync(lean);
    fs.writeFileSync(path.join(lean, 'package.json'), `${JSON.stringify({ name: 'ca-lean', version: '1.0.0', private: true }, null, 2)}\n`);
    fs.writeFileSync(path.join(lean, '.npmrc'), `@ca:registry=${registryUrl}\n`);
    succeed(run('npm', ['install', '@ca/tool-lifecycle'], lean), 'npm install @ca/tool-lifecycle');
    expect(fs.existsSync(path.join(lean, 'node_modules', '@ca', 'tool-context'))).toBe(true);
    expect(fs.existsSync(path.join(lean, 'node_modules', '@ca', 'sandbox'))).toBe(false);
    const probe = [
      "const runtime = require('@ca/tool-lifecycle');",
      "let deprecated = 'loaded';",
      "try { require('@ca/tool-lifecycle/process'); } catch (error) { deprecated = error.code + ' ' + /@ca\\/sandbox/.test(error.message); }",
      'console.log(JSON.stringify({ runtime: typeof runtime.ToolRuntime, groups: runtime.PROCESS_GROUPS_SUPPORTED, deprecated }));',
    ].join('\n');
    const result = report(succeed(run(process.execPath, ['-e', probe], lean), 'node -e (the lean install)'));
    expect(result).toEqual({ runtime: 'function', groups: process.platform !== 'win32', deprecated: 'MODULE_NOT_FOUND true' });
  });

  it('installs only @ca/tool-lifecycle and @ca/adapters-builtin in a fresh project; the core comes as peers', () => {
    fs.writeFileSync(path.join(consumer, 'package.json'), `${JSON.stringify({ name: 'ca-consumer', version: '1.0.0', private: true }, null, 2)}\n`);
    fs.writeFileSync(path.join(consumer, '.npmrc'), `@ca:registry=${registryUrl}\n`);
    succeed(run('npm', ['install', '@ca/tool-lifecycle', '@ca/adapters-builtin'], consumer), 'npm install @ca/tool-lifecycle @ca/adapters-builtin');

    const manifest = JSON.parse(fs.readFileSync(path.join(consumer, 'package.json'), 'utf8'));
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['@ca/adapters-builtin', '@ca/tool-lifecycle']);
    const lock = JSON.parse(fs.readFileSync(path.join(consumer, 'package-lock.json'), 'utf8'));
    const resolved = lock.packages['node_modules/@ca/tool-lifecycle'].resolved as string;
    expect(resolved.startsWith(registryUrl)).toBe(true);
    for (const peer of ['@ca/domain', '@ca/schema', '@ca/tool-context', '@ca/sandbox', 'tsyringe']) {
      expect([peer, installedCopies(peer).length]).toEqual([peer, 1]);
    }
  });

  it('runs a plan from a CommonJS script', () => {
    copyFixture('plan.cjs');
    const result = report(succeed(run(process.execPath, ['plan.cjs', dataFolder], consumer), 'node plan.cjs'));
    expect(result).toMatchObject({
      ok: true,
      content: NOTE,
      trace: { toolName: 'builtin.fs.read', success: true },
      writeRefused: 'TOOL_ACCESS_DENIED',
      deactivated: expect.arrayContaining(['builtin.fs.read']),
    });
    expect(result.runtimeModule).toBe(path.join(consumer, 'node_modules', '@ca', 'tool-lifecycle', 'dist', 'index.js'));
  });

  it('runs the same plan from an ES module with named imports', () => {
    copyFixture('plan.mjs');
    const result = report(succeed(run(process.execPath, ['plan.mjs', dataFolder], consumer), 'node plan.mjs'));
    expect(result).toMatchObject({
      isToolRuntime: true,
      ok: true,
      content: NOTE,
      trace: { toolName: 'builtin.fs.read', success: true },
      writeRefused: 'TOOL_ACCESS_DENIED',
    });
    expect(result.builtinTools).toBeGreaterThan(0);
  });

  it('adds @ca/adapters-mcp alone; it shares the one copy of the core and joins the same runtime', () => {
    succeed(run('npm', ['install', '@ca/adapters-mcp'], consumer), 'npm install @ca/adapters-mcp');
    for (const core of ['@ca/domain', '@ca/schema', '@ca/tool-context', '@ca/sandbox', '@ca/tool-lifecycle', 'tsyringe']) {
      expect([core, installedCopies(core)]).toEqual([core, [path.join(consumer, 'node_modules', ...core.split('/'))]]);
    }
    const listed = succeed(run('npm', ['ls', '@ca/tool-lifecycle', '--all', '--parseable'], consumer), 'npm ls @ca/tool-lifecycle');
    expect(new Set(listed.trim().split('\n'))).toEqual(new Set([path.join(consumer, 'node_modules', '@ca', 'tool-lifecycle')]));

    copyFixture('echo-server.cjs');
    copyFixture('mcp-plan.cjs');
    const result = report(succeed(run(process.execPath, ['mcp-plan.cjs', dataFolder], consumer, 120_000), 'node mcp-plan.cjs'));
    expect(result.sources).toEqual(['builtin', 'mcp']);
    expect(result.sourceErrors).toEqual([]);
    expect(result.mcpTools).toEqual(['mcp.echo.echo']);
    expect(result.echo.ok).toBe(true);
    expect(JSON.stringify(result.echo)).toContain('one copy');
    expect(result.read).toBe(NOTE);
    expect(result.coreFromMcp).toEqual(result.coreFromConsumer);
    expect(result.coreFromBuiltin).toEqual(result.coreFromConsumer);
  });
});

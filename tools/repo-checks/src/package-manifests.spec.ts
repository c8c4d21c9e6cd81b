import fs from 'node:fs';
import path from 'node:path';

// Every publishable package carries what a consumer needs: one public entry
// with types, the files to ship, an engines range, the workspace's licence,
// a changelog, where its source lives, source maps that resolve inside the
// tarball, and a README that says how to install it from the private
// registry. A new package that forgets one of these fails here.
const workspaceRoot = path.resolve(__dirname, '..', '..', '..');
const packagesDir = path.join(workspaceRoot, 'packages');
const packages = fs
  .readdirSync(packagesDir)
  .filter((name) => fs.existsSync(path.join(packagesDir, name, 'package.json')))
  .map((name) => ({
    folder: name,
    manifest: JSON.parse(fs.readFileSync(path.join(packagesDir, name, 'package.json'), 'utf8')) as Record<string, any>,
  }));
const publishable = packages.filter((entry) => entry.manifest.private !== true);
const rootManifest = JSON.parse(fs.readFileSync(path.join(workspaceRoot, 'package.json'), 'utf8')) as Record<string, any>;
const rootLicense = fs.readFileSync(path.join(workspaceRoot, 'LICENSE'), 'utf8');

/** Compiler options as `tsc -p <package>/tsconfig.lib.json` sees them: the extended files first, then the file's own. */
function compilerOptions(tsconfigPath: string): Record<string, unknown> {
  const tsconfig = JSON.parse(fs.readFileSync(tsconfigPath, 'utf8')) as { extends?: string; compilerOptions?: Record<string, unknown> };
  const inherited = tsconfig.extends ? compilerOptions(path.resolve(path.dirname(tsconfigPath), tsconfig.extends)) : {};
  return { ...inherited, ...tsconfig.compilerOptions };
}

/** The bare package names a package's sources import (`import … from`, `export … from`, `require(…)`), tests included. */
function importsOf(folder: string): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== '__fixtures__' && entry.name !== 'node_modules') walk(full);
      } else if (entry.name.endsWith('.ts')) {
        const text = fs.readFileSync(full, 'utf8');
        for (const match of text.matchAll(/(?:from\s+|require\(\s*|import\(\s*)'((?:@[\w.-]+\/)?[\w.-]+)(?:\/[^']*)?'/g)) names.add(match[1]!);
      }
    }
  };
  walk(path.join(packagesDir, folder, 'src'));
  return names;
}

/** The part of the "Install" section every package shares: from its heading to the package's own install command. */
function sharedInstallText(readme: string): string | undefined {
  const start = readme.indexOf('\n## Install\n');
  if (start === -1) return undefined;
  const end = readme.indexOf('```sh\n', start);
  return end === -1 ? undefined : readme.slice(start + 1, end);
}

/** The shell block that follows the shared part of the "Install" section. */
function installCommands(readme: string): string {
  const start = readme.indexOf('```sh\n', readme.indexOf('\n## Install\n'));
  return readme.slice(start + '```sh\n'.length, readme.indexOf('```', start + '```sh\n'.length));
}

describe('package manifests', () => {
  it('finds the packages of the design', () => {
    expect(packages.map((entry) => entry.folder)).toEqual(
      expect.arrayContaining([
        'domain',
        'schema',
        'tool-context',
        'sandbox',
        'tool-lifecycle',
        'adapters-builtin',
        'adapters-custom',
        'adapters-mcp',
        'adapters-skills',
        'adapters-wrapped',
        'cli',
        'model-tools',
        'mcp-server',
      ]),
    );
  });

  it.each(packages.map((entry) => [entry.folder, entry.manifest] as const))('%s is publishable and has one door', (folder, manifest) => {
    expect(manifest.name).toBe(`@ca/${folder}`);
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(manifest.license).toBeTruthy();
    expect(manifest.engines?.node).toBeTruthy();
    expect(manifest.files).toEqual(expect.arrayContaining(['dist', 'README.md']));
    expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
    for (const [subpath, target] of Object.entries(manifest.exports as Record<string, unknown>)) {
      expect(subpath).not.toContain('*');
      if (typeof target === 'object' && target !== null) expect(Object.keys(target)[0]).toBe('types');
    }
    expect(fs.existsSync(path.join(packagesDir, folder, 'README.md'))).toBe(true);
    expect(fs.existsSync(path.join(packagesDir, folder, 'src', 'index.ts'))).toBe(true);
    expect(fs.existsSync(path.join(packagesDir, folder, 'src', 'index.spec.ts'))).toBe(true);
  });

  it('adapters take the core packages as peer dependencies, so a service holds one copy of tokens and errors', () => {
    for (const { folder, manifest } of packages.filter((entry) => entry.folder.startsWith('adapters-'))) {
      expect([folder, manifest.peerDependencies?.['@ca/tool-lifecycle']]).toEqual([folder, expect.any(String)]);
      expect([folder, manifest.dependencies?.['@ca/tool-lifecycle']]).toEqual([folder, undefined]);
    }
  });

  it('a library package that imports @ca/sandbox (it starts programs) takes it as a peer dependency, like the other core packages', () => {
    const importers = packages.filter(({ folder, manifest }) => folder !== 'sandbox' && manifest.private !== true && importsOf(folder).has('@ca/sandbox'));
    expect(importers.map((entry) => entry.folder).sort()).toEqual(expect.arrayContaining(['adapters-builtin', 'adapters-mcp', 'adapters-skills', 'cli']));
    for (const { folder, manifest } of importers) {
      if (folder === 'cli') {
        // The application pins every @ca package it runs, as dependencies.
        expect([folder, manifest.dependencies?.['@ca/sandbox']]).toEqual([folder, expect.any(String)]);
        continue;
      }
      expect([folder, manifest.peerDependencies?.['@ca/sandbox']]).toEqual([folder, expect.any(String)]);
      expect([folder, manifest.dependencies?.['@ca/sandbox']]).toEqual([folder, undefined]);
    }
  });

  it('the runtime takes @ca/sandbox as an optional peer (only its deprecated subpaths load it), and the sandbox imports nothing of the runtime', () => {
    const lifecycle = packages.find((entry) => entry.folder === 'tool-lifecycle')!.manifest;
    expect(lifecycle.peerDependenciesMeta?.['@ca/sandbox']).toEqual({ optional: true });
    const sandbox = packages.find((entry) => entry.folder === 'sandbox')!.manifest;
    expect(
      Object.keys({ ...sandbox.dependencies, ...sandbox.peerDependencies })
        .filter((name) => name.startsWith('@ca/'))
        .sort(),
    ).toEqual(['@ca/domain', '@ca/tool-context']);
    expect([...importsOf('sandbox')].filter((name) => name.startsWith('@ca/')).sort()).toEqual(['@ca/domain', '@ca/tool-context']);
  });

  it("no package's sources (tests included) reach into tools/: nx would count the tool's dependencies as the package's and release it for their changes", () => {
    // A spec that required tools/reliability/ made @ca/cli depend on @ca/bench,
    // which depends implicitly on every package: adding any adapter then
    // released @ca/cli (tools/release/check-version-rules.js). Fixtures that
    // several packages share live in a package's src/__fixtures__/.
    const reaching: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(full);
        } else if (/\.(?:ts|js|mjs|cjs)$/.test(entry.name)) {
          const text = fs.readFileSync(full, 'utf8');
          for (const match of text.matchAll(/['"`]((?:\.\.\/)+tools\/[^'"`]*)['"`]/g)) {
            if (path.resolve(path.dirname(full), match[1]!).startsWith(path.join(workspaceRoot, 'tools') + path.sep)) {
              reaching.push(`${path.relative(workspaceRoot, full)}: ${match[1]}`);
            }
          }
        }
      }
    };
    for (const entry of packages) walk(path.join(packagesDir, entry.folder, 'src'));
    expect(reaching).toEqual([]);
  });
});

describe('what every published package ships', () => {
  it('there are published packages, and the workspace has a LICENSE of the licence they declare', () => {
    expect(publishable.length).toBeGreaterThanOrEqual(10);
    expect(rootManifest.license).toBe('MIT');
    expect(rootLicense.startsWith('MIT License\n')).toBe(true);
  });

  it.each(publishable.map((entry) => [entry.folder, entry.manifest] as const))(
    '%s ships a copy of the root LICENSE and declares the same licence',
    (folder, manifest) => {
      expect(manifest.license).toBe(rootManifest.license);
      expect(manifest.files).toContain('LICENSE');
      const copy = path.join(packagesDir, folder, 'LICENSE');
      expect([folder, fs.existsSync(copy)]).toEqual([folder, true]);
      // The root file is the one source: a copy that differs is out of date (`cp LICENSE packages/<folder>/`).
      expect([folder, fs.readFileSync(copy, 'utf8')]).toEqual([folder, rootLicense]);
    },
  );

  it.each(publishable.map((entry) => [entry.folder, entry.manifest] as const))(
    '%s ships a CHANGELOG.md whose first line is the entry of the current version',
    (folder, manifest) => {
      expect(manifest.files).toContain('CHANGELOG.md');
      const changelogPath = path.join(packagesDir, folder, 'CHANGELOG.md');
      expect([folder, fs.existsSync(changelogPath)]).toEqual([folder, true]);
      // nx release puts each new entry above the first line, so the file has no
      // title: it starts with the newest version's heading ("## 0.2.0" or "## 0.2.0 (2026-01-31)").
      const firstLine = fs.readFileSync(changelogPath, 'utf8').split('\n')[0];
      expect([folder, firstLine]).toEqual([folder, expect.stringMatching(/^#{1,2} \d+\.\d+\.\d+(-[0-9A-Za-z.]+)?( \(\d{4}-\d{2}-\d{2}\))?$/)]);
      expect([folder, firstLine!.split(' ')[1]]).toEqual([folder, manifest.version]);
    },
  );

  it('every package names the same repository, with its own folder as the directory', () => {
    const urls = new Set(publishable.map((entry) => entry.manifest.repository?.url));
    expect(urls.size).toBe(1);
    const [url] = [...urls];
    expect(url).toMatch(/^git\+https:\/\/\S+\.git$/);
    for (const { folder, manifest } of publishable) {
      expect([folder, manifest.repository]).toEqual([folder, { type: 'git', url, directory: `packages/${folder}` }]);
    }
  });

  it.each(publishable.map((entry) => [entry.folder, entry.manifest] as const))(
    '%s: the source maps it emits resolve inside the tarball (it ships src/ without tests)',
    (folder, manifest) => {
      const options = compilerOptions(path.join(packagesDir, folder, 'tsconfig.lib.json'));
      expect([folder, options.rootDir, options.outDir]).toEqual([folder, 'src', 'dist']);
      if (options.sourceMap === true || options.declarationMap === true) {
        // dist/*.js.map and dist/*.d.ts.map name ../src/*.ts: those files must be in the package.
        expect([folder, manifest.files]).toEqual([
          folder,
          expect.arrayContaining(['src', '!src/**/*.spec.ts', '!src/**/__fixtures__', '!src/**/*.test-helper.ts']),
        ]);
      } else {
        expect([folder, manifest.files]).toEqual([folder, expect.not.arrayContaining(['src'])]);
      }
    },
  );

  it('every README has the same "Install" section: the @ca scope mapped in .npmrc, then its own install command', () => {
    const sections = new Map<string, string | undefined>();
    for (const { folder, manifest } of publishable) {
      const readme = fs.readFileSync(path.join(packagesDir, folder, 'README.md'), 'utf8');
      const shared = sharedInstallText(readme);
      sections.set(folder, shared);
      expect([folder, shared]).toEqual([folder, expect.stringContaining('\n```ini\n@ca:registry=https://npm.example.internal/\n```\n')]);
      expect([folder, installCommands(readme)]).toEqual([
        folder,
        expect.stringMatching(new RegExp(`^npm (i|install)( -D)? ${manifest.name.replace('/', '\\/')}( |$)`, 'm')),
      ]);
    }
    // One wording everywhere: the first package's text is the reference for the rest.
    const [reference] = [...sections.values()];
    for (const [folder, shared] of sections) expect([folder, shared]).toEqual([folder, reference]);
  });
});

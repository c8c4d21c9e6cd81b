import fs from 'node:fs';
import path from 'node:path';

// Every publishable package carries what a consumer needs: one public entry
// with types, the files to ship, an engines range, a licence and a README.
const workspaceRoot = path.resolve(__dirname, '..', '..', '..');
const packagesDir = path.join(workspaceRoot, 'packages');
const packages = fs
  .readdirSync(packagesDir)
  .filter((name) => fs.existsSync(path.join(packagesDir, name, 'package.json')))
  .map((name) => ({
    folder: name,
    manifest: JSON.parse(fs.readFileSync(path.join(packagesDir, name, 'package.json'), 'utf8')) as Record<string, any>,
  }));

describe('package manifests', () => {
  it('finds the packages of the design', () => {
    expect(packages.map((entry) => entry.folder)).toEqual(
      expect.arrayContaining(['domain', 'schema', 'tool-context', 'tool-lifecycle', 'adapters-builtin', 'adapters-custom', 'adapters-mcp', 'adapters-skills', 'adapters-wrapped', 'cli']),
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
});

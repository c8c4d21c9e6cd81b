import * as path from 'node:path';
import { formatFiles, generateFiles, logger, names, readJson, updateJson, writeJson, type GeneratorCallback, type Tree } from '@nx/devkit';
import type { AdapterGeneratorSchema } from './schema';

/** What an adapter's name becomes in paths, identifiers and the package name. */
export interface AdapterNames {
  /** `jira` — kebab-case, used in file names, as the tools' namespace and as the source kind. */
  readonly fileName: string;
  /** `Jira` — in `JiraToolSource`, `registerJiraAdapter`, `JiraAdapterSettings`. */
  readonly className: string;
  /** `JIRA` — in `JIRA_TOOL_NAMES` and the error codes (`JIRA_INVALID_SETTINGS`). */
  readonly constantName: string;
  /** `@ca/adapters-jira` — the npm package and the Nx project. */
  readonly packageName: string;
  /** `packages/adapters-jira`. */
  readonly projectRoot: string;
  /** `jira.ping` — the example tool. */
  readonly exampleToolName: string;
}

const NAME_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

// The adapter's name is its source kind, so it must be a kind @ca/domain
// accepts. Copied, not imported: the generator runs from sources, before any
// package is built; generator.spec.ts checks they agree with @ca/domain.
/** `MAX_TOOL_SOURCE_KIND_LENGTH` of `@ca/domain`. */
export const MAX_SOURCE_KIND_LENGTH = 40;
/** `KNOWN_TOOL_SOURCE_KINDS` of `@ca/domain`: the kinds of the project's own adapters, which the runtime treats specially. */
export const KNOWN_SOURCE_KINDS: readonly string[] = Object.freeze(['builtin', 'custom', 'mcp', 'skill', 'wrapped']);

/** The core packages every adapter builds on; adapters take them as peers so a service holds one copy. */
const CORE_PEERS = ['@ca/domain', '@ca/tool-context', '@ca/tool-lifecycle'] as const;
const FALLBACK_CORE_RANGE = '^0.1.0';
const FALLBACK_TSYRINGE_RANGE = '^4.10.0';
const INITIAL_VERSION = '0.1.0';
/** The mapping in tsconfig.base.json that already resolves every `@ca/<folder>` to its sources. */
const WILDCARD_PATH = '@ca/*';

/**
 * What a published package ships besides `dist/`: its TypeScript sources
 * without tests (so the source maps and declaration maps in `dist/` resolve),
 * the README, the changelog `nx release` appends to, and the licence.
 */
const PUBLISHED_FILES = [
  'dist',
  '!dist/**/*.spec.*',
  '!dist/**/__fixtures__',
  'src',
  '!src/**/*.spec.ts',
  '!src/**/__fixtures__',
  '!src/**/*.test-helper.ts',
  'README.md',
  'CHANGELOG.md',
  'LICENSE',
] as const;

/**
 * The names derived from an adapter's kebab-case name.
 * @throws Error when `name` is not kebab-case (`jira`, `azure-devops`), is
 *   longer than a source kind may be, or is one of the known source kinds.
 */
export function adapterNames(name: string): AdapterNames {
  const given = typeof name === 'string' ? name.trim() : name;
  if (typeof given !== 'string' || !NAME_PATTERN.test(given)) {
    throw new Error(
      `The adapter name must be kebab-case — lower-case letters and digits, words joined by "-", starting with a letter (e.g. "jira" or "azure-devops"); got ${JSON.stringify(name)}.`,
    );
  }
  const fileName = given.startsWith('adapters-') ? given.slice('adapters-'.length) : given;
  if (fileName.length === 0 || !NAME_PATTERN.test(fileName)) {
    throw new Error(`The adapter name ${JSON.stringify(name)} leaves nothing after "adapters-"; pass only the adapter's own name, e.g. "jira".`);
  }
  if (fileName.length > MAX_SOURCE_KIND_LENGTH) {
    throw new Error(
      `The adapter name "${fileName}" is ${fileName.length} characters long; it becomes the source kind of its tools, which may have at most ${MAX_SOURCE_KIND_LENGTH}. Choose a shorter name.`,
    );
  }
  if (KNOWN_SOURCE_KINDS.includes(fileName)) {
    throw new Error(
      `The adapter name "${fileName}" is the source kind of one of the workspace's own adapters (${KNOWN_SOURCE_KINDS.join(', ')}), which the runtime treats specially; an adapter's name is its source kind. Choose a name of its own, e.g. "jira".`,
    );
  }
  return {
    fileName,
    className: names(fileName).className,
    constantName: names(fileName).constantName,
    packageName: `@ca/adapters-${fileName}`,
    projectRoot: `packages/adapters-${fileName}`,
    exampleToolName: `${fileName}.ping`,
  };
}

/**
 * Scaffolds `packages/adapters-<name>`: a publishable `@ca/adapters-<name>`
 * package in the shape of the other adapters — a `ToolSource` with one
 * example tool, `create<Name>Adapter` and `register<Name>Adapter`, tags, peer
 * dependencies on the core packages, release settings (repository, the
 * workspace's LICENSE, a starting CHANGELOG.md), tests and a README. It
 * touches no file outside the new folder when `tsconfig.base.json` maps
 * `@ca/*` already; otherwise it adds the package's own mapping there.
 *
 * @throws Error when the name is not kebab-case, the folder or a tsconfig
 *   path for the package already exists, the workspace has no LICENSE, or no
 *   package names the repository.
 */
export async function adapterGenerator(tree: Tree, schema: AdapterGeneratorSchema): Promise<GeneratorCallback> {
  const adapter = adapterNames(schema.name);
  const { projectRoot, packageName } = adapter;
  if (tree.exists(projectRoot)) {
    throw new Error(`${projectRoot} already exists. Choose another adapter name, or remove the folder first.`);
  }
  const basePaths = tree.exists('tsconfig.base.json')
    ? (readJson<{ compilerOptions?: { paths?: Record<string, string[]> } }>(tree, 'tsconfig.base.json').compilerOptions?.paths ?? {})
    : {};
  if (packageName in basePaths) {
    throw new Error(
      `tsconfig.base.json already maps ${packageName} (to ${JSON.stringify(basePaths[packageName])}). Remove the stale entry, or choose another adapter name.`,
    );
  }

  const license = tree.read('LICENSE', 'utf-8');
  if (license === null || license.trim() === '') {
    throw new Error('The workspace has no LICENSE file at its root. Every package ships a copy of it; add the LICENSE first, then generate the adapter.');
  }
  const repositoryUrl = workspaceRepositoryUrl(tree);

  const description = schema.description?.trim() || `${adapter.className} tools as a tool source.`;
  const coreRanges = Object.fromEntries(CORE_PEERS.map((peer) => [peer, currentRange(tree, peer)]));

  writeJson(tree, `${projectRoot}/package.json`, {
    name: packageName,
    version: INITIAL_VERSION,
    description,
    license: 'MIT',
    repository: { type: 'git', url: repositoryUrl, directory: projectRoot },
    type: 'commonjs',
    main: './dist/index.js',
    types: './dist/index.d.ts',
    exports: {
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './package.json': './package.json',
    },
    files: [...PUBLISHED_FILES],
    engines: { node: '>=20' },
    publishConfig: { access: 'restricted' },
    sideEffects: false,
    peerDependencies: { ...coreRanges, tsyringe: tsyringeRange(tree) },
  });

  writeJson(tree, `${projectRoot}/project.json`, {
    $schema: '../../node_modules/nx/schemas/project-schema.json',
    name: packageName,
    sourceRoot: `${projectRoot}/src`,
    projectType: 'library',
    tags: ['layer:adapter', 'scope:adapter', 'npm:public'],
    targets: { build: {}, typecheck: {}, lint: {}, test: {} },
  });

  writeJson(tree, `${projectRoot}/tsconfig.json`, {
    extends: '../../tsconfig.base.json',
    compilerOptions: { types: ['node', 'jest'], noEmit: true },
    include: ['src/**/*.ts'],
  });

  writeJson(tree, `${projectRoot}/tsconfig.lib.json`, {
    extends: '../../tsconfig.base.json',
    compilerOptions: { rootDir: 'src', outDir: 'dist', paths: {}, types: ['node'] },
    include: ['src/**/*.ts'],
    exclude: ['src/**/*.spec.ts', 'src/**/__fixtures__/**', 'src/**/*.test-helper.ts'],
  });

  generateFiles(tree, path.join(__dirname, 'files'), projectRoot, {
    ...adapter,
    description,
    version: INITIAL_VERSION,
    peerInstall: [...CORE_PEERS, '@ca/schema', 'tsyringe'].join(' '),
  });
  // A copy, not a link: npm leaves symbolic links out of a tarball. The
  // repository's checks keep every copy identical to the root LICENSE.
  tree.write(`${projectRoot}/LICENSE`, license);

  // With the `@ca/*` mapping the workspace needs no edit outside the new
  // folder, so the commit that adds an adapter touches no other package's
  // inputs and `nx release` bumps nothing else for it.
  if (tree.exists('tsconfig.base.json') && !(WILDCARD_PATH in basePaths)) {
    updateJson(tree, 'tsconfig.base.json', (tsconfig) => {
      tsconfig.compilerOptions ??= {};
      tsconfig.compilerOptions.paths ??= {};
      tsconfig.compilerOptions.paths[packageName] = [`./${projectRoot}/src/index.ts`];
      return tsconfig;
    });
  }

  // The repository's Prettier settings (`npm test` checks them): the new
  // package is committed formatted, whatever the templates' layout.
  await formatFiles(tree);

  return () => {
    logger.info(
      [
        `Created ${packageName} in ${projectRoot}.`,
        'Next:',
        `  1. npm install                      (links the new workspace package and records it in package-lock.json)`,
        `  2. npx nx run-many -t build lint typecheck test -p ${packageName}`,
        `  3. replace the example tool ${adapter.exampleToolName} with real ones (see ${projectRoot}/README.md)`,
        '  4. commit with a conventional message, e.g. "feat(adapters-' +
          adapter.fileName +
          '): first tools" — nx release picks the package up (tag npm:public).',
      ].join('\n'),
    );
  };
}

/** `^<version>` of a workspace package as it is now, so a new adapter peers on what the workspace ships. */
function currentRange(tree: Tree, packageName: string): string {
  const manifestPath = `packages/${packageName.replace(/^@ca\//, '')}/package.json`;
  if (!tree.exists(manifestPath)) return FALLBACK_CORE_RANGE;
  const version = readJson<{ version?: unknown }>(tree, manifestPath).version;
  return typeof version === 'string' && /^\d+\.\d+\.\d+/.test(version) ? `^${version}` : FALLBACK_CORE_RANGE;
}

/**
 * The repository every package names (`repository.url`); the new package adds
 * its own `directory`. Read from the workspace's packages so the URL lives in
 * their manifests only, and every new package agrees with them.
 */
function workspaceRepositoryUrl(tree: Tree): string {
  const folders = tree.exists('packages') ? tree.children('packages').sort() : [];
  // The core runtime first: it is always there in a real workspace.
  for (const folder of ['tool-lifecycle', ...folders]) {
    const manifestPath = `packages/${folder}/package.json`;
    if (!tree.exists(manifestPath)) continue;
    const repository = readJson<{ repository?: unknown }>(tree, manifestPath).repository;
    const url = typeof repository === 'object' && repository !== null ? (repository as { url?: unknown }).url : repository;
    if (typeof url === 'string' && url.trim() !== '') return url;
  }
  throw new Error(
    'No package under packages/ has a "repository" field to copy the repository URL from. Add { "type": "git", "url": "<repository URL>", "directory": "packages/<folder>" } to packages/tool-lifecycle/package.json, then generate the adapter.',
  );
}

/** The tsyringe range the core runtime uses, so adapters and core agree on one copy. */
function tsyringeRange(tree: Tree): string {
  const manifestPath = 'packages/tool-lifecycle/package.json';
  if (!tree.exists(manifestPath)) return FALLBACK_TSYRINGE_RANGE;
  const manifest = readJson<{ dependencies?: Record<string, string>; peerDependencies?: Record<string, string> }>(tree, manifestPath);
  return manifest.peerDependencies?.['tsyringe'] ?? manifest.dependencies?.['tsyringe'] ?? FALLBACK_TSYRINGE_RANGE;
}

export default adapterGenerator;

#!/usr/bin/env node
// CI step: proves, with throwaway commits, that `nx release` versions the
// packages as the README's "Releasing" section says.
//
//   1. A breaking change in a core package (`feat(tool-context)!: …`): the
//      release dry run succeeds; the core gets the bump semver requires (a
//      minor below 1.0.0, a major from 1.0.0); every package that depends on
//      it, directly or through another package, gets at least a patch; every
//      range on a released package (peer or not) accepts the version released;
//      the other packages keep their version.
//   2. The README's "Writing an adapter" steps: `nx g …:adapter`, then
//      `npm install`. A commit of the lockfile alone (typed `fix:`, so it
//      would release something if it counted) bumps nothing; the commit of
//      the generated package then bumps none of the existing packages.
//
// The commits are made in a temporary clone of this checkout's HEAD (with its
// uncommitted changes, if any, committed there first), on temporary branches,
// after tagging every package at its version on disk, so only the throwaway
// commits count; it works on a shallow clone and without release tags. The
// checkout itself is never written to: its branch, HEAD, refs and working
// tree are compared before and after, and the clone is deleted even when a
// check fails or the run is interrupted. node_modules is this checkout's,
// linked; the lockfile is written with `npm install --package-lock-only`,
// which leaves node_modules alone.
//
//   node tools/release/check-version-rules.js
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createRequire } = require('node:module');

const workspaceRoot = path.resolve(__dirname, '..', '..');
const nxBin = path.join(workspaceRoot, 'node_modules', 'nx', 'dist', 'bin', 'nx.js');
// The semver implementation nx release itself uses.
const semver = createRequire(require.resolve('nx/package.json', { paths: [workspaceRoot] }))('semver');

const CORE_PROJECT = '@ca/tool-context';
const THROWAWAY_ADAPTER = 'release-check';
// Throwaway commits need an author; CI machines have no git identity.
const GIT_IDENTITY = ['-c', 'user.name=Release check', '-c', 'user.email=release-check@localhost', '-c', 'commit.gpgsign=false', '-c', 'tag.gpgsign=false'];
const DEPENDENCY_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies'];

class CheckFailure extends Error {}
/** A child stopped by Ctrl-C or a CI cancel: report it as such, not as a failed check. */
class Interrupted extends Error {
  constructor(signal) {
    super(`interrupted (${signal})`);
    this.exitCode = signal === 'SIGINT' ? 130 : 143;
  }
}

/** Child environment: nothing of an outer Nx task, npm script or git hook leaks in. */
function environment() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(NX_|JEST_|npm_|NPM_CONFIG_|GIT_)/i.test(key) || key === 'NODE_OPTIONS' || key === 'INIT_CWD') continue;
    env[key] = value;
  }
  return { ...env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', CI: 'true', FORCE_COLOR: '0', NPM_CONFIG_UPDATE_NOTIFIER: 'false' };
}

function run(command, args, cwd, { input, allowFailure = false } = {}) {
  const result = spawnSync(command, args, { cwd, env: environment(), encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024, timeout: 300_000 });
  if (result.signal === 'SIGINT' || result.signal === 'SIGTERM') throw new Interrupted(result.signal);
  if (!allowFailure && (result.status !== 0 || result.error)) {
    const reason = result.error ? result.error.message : result.signal ? `signal ${result.signal}` : `exit ${result.status}`;
    throw new CheckFailure(
      `\`${[path.basename(command), ...args].join(' ')}\` in ${cwd} failed (${reason}).\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`,
    );
  }
  return result;
}

const git = (cwd, ...args) => run('git', [...GIT_IDENTITY, ...args], cwd).stdout;
const nx = (cwd, ...args) => run(process.execPath, [nxBin, ...args], cwd).stdout;

function expect(condition, message) {
  if (!condition) throw new CheckFailure(message);
}

/** What must be the same after the check: branch, HEAD, every ref, the working tree and the index. */
function checkoutState() {
  return {
    branch: run('git', ['symbolic-ref', '-q', 'HEAD'], workspaceRoot, { allowFailure: true }).stdout.trim() || '(detached)',
    head: git(workspaceRoot, 'rev-parse', 'HEAD').trim(),
    refs: git(workspaceRoot, 'for-each-ref', '--format=%(refname) %(objectname)'),
    status: git(workspaceRoot, 'status', '--porcelain=v1', '--untracked-files=all'),
    diff: git(workspaceRoot, 'diff', 'HEAD', '--binary'),
  };
}

/** A clone of HEAD with the checkout's uncommitted changes committed on top; returns the base commit. */
function cloneCheckout(clone) {
  fs.mkdirSync(clone);
  git(clone, 'init', '-q');
  // Fetching HEAD (not cloning) works for a detached HEAD and, with
  // --update-shallow, from a shallow checkout; --no-tags: the base is tagged below.
  git(clone, 'fetch', '-q', '--no-tags', '--update-shallow', workspaceRoot, 'HEAD');
  git(clone, 'checkout', '-q', '-b', 'release-check/base', 'FETCH_HEAD');

  const diff = git(workspaceRoot, 'diff', 'HEAD', '--binary');
  const untracked = git(workspaceRoot, 'ls-files', '-z', '--others', '--exclude-standard')
    .split('\0')
    // A linked node_modules is not covered by `node_modules/`; the clone links its own below.
    .filter((file) => file !== '' && file !== 'node_modules' && !file.startsWith('node_modules/'));
  if (diff !== '' || untracked.length > 0) {
    if (diff !== '') run('git', ['apply', '--binary', '--whitespace=nowarn'], clone, { input: diff });
    for (const file of untracked) {
      const from = path.join(workspaceRoot, file);
      const to = path.join(clone, file);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      if (fs.lstatSync(from).isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), to);
      else fs.copyFileSync(from, to);
    }
    git(clone, 'add', '-A');
    git(clone, 'commit', '-q', '--no-verify', '-m', "chore: the checkout's uncommitted changes");
    console.log(`  the checkout has uncommitted changes: checking them too (${untracked.length} untracked file(s))`);
  }
  fs.symlinkSync(path.join(workspaceRoot, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
  // The link is a file to git (`node_modules/` in .gitignore matches folders only).
  fs.appendFileSync(path.join(clone, '.git', 'info', 'exclude'), '/node_modules\n');
  return git(clone, 'rev-parse', 'HEAD').trim();
}

/** The release projects with their folder, manifest and the release projects they depend on (from the Nx graph). */
function readWorkspace(clone, graphFile) {
  const nxJson = JSON.parse(fs.readFileSync(path.join(clone, 'nx.json'), 'utf8'));
  const patterns = nxJson.release?.projects ?? [];
  expect(patterns.length > 0, 'nx.json has no release.projects: nothing would be released.');
  const names = JSON.parse(nx(clone, 'show', 'projects', `--projects=${[].concat(patterns).join(',')}`, '--json'));
  nx(clone, 'graph', `--file=${graphFile}`);
  const { graph } = JSON.parse(fs.readFileSync(graphFile, 'utf8'));
  const projects = new Map();
  for (const name of names) {
    const root = graph.nodes[name].data.root;
    projects.set(name, {
      root,
      dependsOn: (graph.dependencies[name] ?? []).map((dependency) => dependency.target).filter((target) => names.includes(target)),
    });
  }
  return { projects, tagPattern: nxJson.release?.releaseTag?.pattern ?? '{projectName}@{version}' };
}

function manifests(clone, projects) {
  const result = new Map();
  for (const [name, { root }] of projects) {
    const file = path.join(clone, root, 'package.json');
    if (fs.existsSync(file)) result.set(name, JSON.parse(fs.readFileSync(file, 'utf8')));
  }
  return result;
}

/** Every project that depends on `target`, directly or through other release projects. */
function dependentsOf(target, projects) {
  const found = new Set();
  let added = true;
  while (added) {
    added = false;
    for (const [name, { dependsOn }] of projects) {
      if (!found.has(name) && dependsOn.some((dependency) => dependency === target || found.has(dependency))) {
        found.add(name);
        added = true;
      }
    }
  }
  return found;
}

function localRanges(manifest, names) {
  const ranges = [];
  for (const field of DEPENDENCY_FIELDS) {
    for (const [dependency, range] of Object.entries(manifest[field] ?? {})) {
      if (names.has(dependency)) ranges.push({ field, dependency, range });
    }
  }
  return ranges;
}

/** `nx release version` for real, in the clone, without commit or tags; the manifests afterwards. */
function versionInClone(clone, projects) {
  nx(clone, 'release', 'version', '--git-commit=false', '--git-tag=false', '--stage-changes=false');
  return manifests(clone, projects);
}

function resetClone(clone, branch) {
  git(clone, 'reset', '-q', '--hard');
  git(clone, 'clean', '-q', '-fd');
  git(clone, 'checkout', '-q', branch);
}

function checkBreakingCoreChange(clone, workspace) {
  const { projects } = workspace;
  expect(projects.has(CORE_PROJECT), `${CORE_PROJECT} is not among the release projects (${[...projects.keys()].join(', ')}).`);
  const before = manifests(clone, projects);
  const names = new Set(projects.keys());
  const core = projects.get(CORE_PROJECT);
  const scope = CORE_PROJECT.replace(/^@[^/]+\//, '');

  git(clone, 'checkout', '-q', '-b', 'release-check/breaking-core');
  fs.appendFileSync(path.join(clone, core.root, 'src', 'index.ts'), '\n// A breaking change to the public API, for the release check.\n');
  git(clone, 'add', '-A');
  git(clone, 'commit', '-q', '--no-verify', '-m', `feat(${scope})!: a breaking change to the public API`);

  // The preview CI runs: it used to stop on the first peer range the new core left.
  const preview = nx(clone, 'release', '--dry-run', '--skip-publish');
  const oldCore = before.get(CORE_PROJECT).version;
  const newCore = semver.inc(oldCore, semver.major(oldCore) === 0 ? 'minor' : 'major');
  expect(
    preview.includes(`CHANGELOG.md for ${CORE_PROJECT}@${newCore}`),
    `The release dry run does not preview a CHANGELOG.md entry for ${CORE_PROJECT}@${newCore}:\n${preview}`,
  );

  const after = versionInClone(clone, projects);
  expect(
    after.get(CORE_PROJECT).version === newCore,
    `${CORE_PROJECT}: a breaking change at ${oldCore} must give ${newCore}, got ${after.get(CORE_PROJECT).version}.`,
  );
  const dependents = dependentsOf(CORE_PROJECT, projects);
  expect(dependents.size > 0, `No release project depends on ${CORE_PROJECT}: the check proves nothing about dependents.`);
  const lines = [`  ${CORE_PROJECT} ${oldCore} -> ${newCore} (breaking change below 1.0.0: minor; from 1.0.0: major)`];
  for (const [name, manifest] of after) {
    const old = before.get(name);
    if (name === CORE_PROJECT) continue;
    if (dependents.has(name)) {
      expect(
        semver.gte(manifest.version, semver.inc(old.version, 'patch')),
        `${name} depends on ${CORE_PROJECT} and must get at least a patch release, got ${old.version} -> ${manifest.version}.`,
      );
      const moved = localRanges(old, names)
        .filter((entry) => entry.dependency === CORE_PROJECT)
        .map((entry) => {
          const range = manifest[entry.field][entry.dependency];
          expect(!semver.satisfies(newCore, entry.range), `The check assumes ${name}'s ${entry.field} range ${entry.range} excludes ${newCore}; it does not.`);
          return `${entry.field} ${entry.range} -> ${range}`;
        });
      lines.push(`  ${name} ${old.version} -> ${manifest.version}${moved.length ? ` (${CORE_PROJECT}: ${moved.join(', ')})` : ''}`);
    } else {
      expect(manifest.version === old.version, `${name} does not depend on ${CORE_PROJECT} but went ${old.version} -> ${manifest.version}.`);
    }
    // Never a package whose range excludes what is released with it.
    for (const entry of localRanges(manifest, names)) {
      const released = after.get(entry.dependency).version;
      expect(
        semver.satisfies(released, entry.range),
        `${name}'s ${entry.field} range ${entry.range} for ${entry.dependency} does not accept ${released}, the version released with it.`,
      );
    }
  }
  console.log(lines.join('\n'));
}

function checkAdapterSteps(clone, workspace) {
  const { projects } = workspace;
  const before = manifests(clone, projects);
  const packageName = `@ca/adapters-${THROWAWAY_ADAPTER}`;
  git(clone, 'checkout', '-q', '-b', 'release-check/adapter-steps');

  // The README's steps: generate, then `npm install` records the new workspace package in the lockfile.
  nx(clone, 'g', '@ca/workspace-plugin:adapter', THROWAWAY_ADAPTER, '--no-interactive');
  const link = path.join(clone, 'node_modules');
  fs.unlinkSync(link); // npm must not see, let alone change, the checkout's node_modules
  try {
    run('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], clone);
  } finally {
    fs.symlinkSync(path.join(workspaceRoot, 'node_modules'), link, 'dir');
  }
  const lockfileChanged = run('git', ['diff', '--quiet', '--', 'package-lock.json'], clone, { allowFailure: true }).status === 1;
  expect(lockfileChanged, `npm install did not change package-lock.json for ${packageName}: the lockfile check would prove nothing.`);

  // First the lockfile alone, typed so that it would release something if it counted.
  git(clone, 'add', 'package-lock.json');
  git(clone, 'commit', '-q', '--no-verify', '-m', `fix: record ${packageName} in package-lock.json`);
  git(clone, 'stash', 'push', '-q', '--include-untracked', '-m', 'the generated package');
  const afterLockfile = versionInClone(clone, projects);
  for (const [name, manifest] of afterLockfile) {
    expect(
      manifest.version === before.get(name).version,
      `A commit of package-lock.json alone released ${name}: ${before.get(name).version} -> ${manifest.version}.`,
    );
  }
  console.log(`  a commit of package-lock.json alone ("fix: …"): no package bumped (${afterLockfile.size} checked)`);
  git(clone, 'reset', '-q', '--hard');
  git(clone, 'stash', 'pop', '-q');

  // Then the rest of what the steps produce. Only files of the new package may change.
  const touched = git(clone, 'status', '--porcelain=v1', '--untracked-files=all')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(3));
  const outside = touched.filter((file) => !file.startsWith(`packages/adapters-${THROWAWAY_ADAPTER}/`));
  expect(outside.length === 0, `The adapter generator changed files outside its package, which count for other packages: ${outside.join(', ')}`);
  git(clone, 'add', '-A');
  git(clone, 'commit', '-q', '--no-verify', '-m', `feat(adapters-${THROWAWAY_ADAPTER}): first tools`);
  const afterAdapter = versionInClone(clone, projects);
  for (const [name, manifest] of afterAdapter) {
    expect(manifest.version === before.get(name).version, `Adding ${packageName} released ${name}: ${before.get(name).version} -> ${manifest.version}.`);
  }
  console.log(`  the generated adapter committed ("feat(adapters-${THROWAWAY_ADAPTER}): …"): no existing package bumped`);
}

function main() {
  expect(fs.existsSync(nxBin), `${nxBin} is missing: run \`npm ci\` first.`);
  expect(run('git', ['rev-parse', '--git-dir'], workspaceRoot, { allowFailure: true }).status === 0, `${workspaceRoot} is not a git repository.`);
  const stateBefore = checkoutState();
  const temporary = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-release-check-'));
  const removeTemporary = () => fs.rmSync(temporary, { recursive: true, force: true });
  const interrupted = (signal, code) => () => {
    removeTemporary();
    console.error(`release check: ${signal}, temporary clone removed.`);
    process.exit(code);
  };
  process.once('SIGINT', interrupted('SIGINT', 130));
  process.once('SIGTERM', interrupted('SIGTERM', 143));

  let failure;
  try {
    const clone = path.join(temporary, 'clone');
    console.log(`release check: throwaway commits in a temporary clone of ${stateBefore.head.slice(0, 12)}`);
    const base = cloneCheckout(clone);
    const workspace = readWorkspace(clone, path.join(temporary, 'graph.json'));
    const baseVersions = manifests(clone, workspace.projects);
    // Every package "released" at the base: only the throwaway commits count.
    for (const [name, manifest] of baseVersions) {
      git(clone, 'tag', workspace.tagPattern.replace('{projectName}', name).replace('{version}', manifest.version), base);
    }
    console.log(`  ${baseVersions.size} packages tagged at their versions on disk`);

    console.log(`a breaking change in ${CORE_PROJECT}:`);
    checkBreakingCoreChange(clone, workspace);
    resetClone(clone, 'release-check/base');

    console.log("the README's adapter steps:");
    checkAdapterSteps(clone, workspace);
  } catch (error) {
    failure = error;
  } finally {
    removeTemporary();
  }

  const stateAfter = checkoutState();
  for (const key of Object.keys(stateBefore)) {
    if (stateBefore[key] !== stateAfter[key]) {
      failure ??= new CheckFailure(`The checkout's ${key} changed during the check; it must not.`);
    }
  }
  if (failure instanceof Interrupted) {
    console.error(`release check ${failure.message}; the temporary clone is removed.`);
    process.exit(failure.exitCode);
  }
  if (failure) {
    console.error(`release check FAILED: ${failure instanceof CheckFailure ? failure.message : failure.stack}`);
    process.exit(1);
  }
  console.log('release check passed; the checkout is as it was (branch, HEAD, refs, working tree).');
}

main();

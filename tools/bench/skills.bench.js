'use strict';
// Discovery of 1,000 generated skills: with 200 KB bodies against 1 KB
// bodies, measured in the same run. Discovery must read only frontmatter, so
// its time, the bytes it reads and the heap it retains must not depend on the
// size of the bodies.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createSkillsAdapter, discoverSkills, nodeSkillsFileSystem, FRONTMATTER_CHUNK_BYTES } = require('../../packages/adapters-skills/dist/index.js');
const { compare, heapAfterGc, median, runWhenMain, scaled } = require('./harness');

const SKILLS = scaled(1_000, 10);
const COUNT = SKILLS.toLocaleString('en-US');

function frontmatter(index) {
  return `---\nname: skill-${index}\ndescription: Generated skill number ${index}. Use it when benchmarking discovery.\nlicense: MIT\nmetadata:\n  author: bench\n---\n`;
}

function blockFrontmatter(index) {
  return `---\nname: skill-${index}\ndescription: |-\n  Generated skill number ${index}.\n  Use it when benchmarking discovery.\nlicense: "MIT"\n---\n`;
}

function writeSkills(root, bodyBytes, header = frontmatter) {
  const line = 'Follow these generated instructions carefully, step by step.\n';
  const body = line.repeat(Math.ceil(bodyBytes / line.length)).slice(0, bodyBytes);
  for (let index = 0; index < SKILLS; index++) {
    const folder = path.join(root, `skill-${index}`);
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, 'SKILL.md'), `${header(index)}\n${body}`);
  }
}

/** The node file system, counting the bytes read through file handles. */
function countingFileSystem() {
  const counter = { bytes: 0 };
  const fileSystem = {
    ...nodeSkillsFileSystem,
    open: async (file, root) => {
      const handle = await nodeSkillsFileSystem.open(file, root);
      return {
        read: async (buffer, offset, length, position) => {
          const result = await handle.read(buffer, offset, length, position);
          counter.bytes += result.bytesRead;
          return result;
        },
        stat: () => handle.stat(),
        close: () => handle.close(),
      };
    },
  };
  return { counter, fileSystem };
}

async function retainedHeap(root) {
  const samples = [];
  for (let round = 0; round < 3; round++) {
    const before = heapAfterGc();
    const source = createSkillsAdapter({ roots: [root] });
    const descriptors = await source.discover();
    if (descriptors.length !== SKILLS) throw new Error(`expected ${SKILLS} skills, found ${descriptors.length}`);
    const after = heapAfterGc();
    samples.push(after - before);
    // Keep the source alive until the second measurement.
    if (source.skills().length !== SKILLS) throw new Error('lost skills');
  }
  return median(samples);
}

async function run() {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-skills-bench-'));
  try {
    const small = path.join(temp, 'small');
    const large = path.join(temp, 'large');
    writeSkills(small, 1024);
    writeSkills(large, 200 * 1024);
    const block = path.join(temp, 'block');
    writeSkills(block, 1024, blockFrontmatter);

    for (const root of [small, large, block]) {
      const { skills, diagnostics } = await discoverSkills({ roots: [root] });
      if (skills.length !== SKILLS || diagnostics.length > 0)
        throw new Error(`discovery of ${root} found ${skills.length} skills and ${diagnostics.length} diagnostics`);
    }

    const medians = await compare(
      {
        '1 KB bodies': { async: true, fn: () => discoverSkills({ roots: [small] }) },
        '200 KB bodies': { async: true, fn: () => discoverSkills({ roots: [large] }) },
        'block scalars': { async: true, fn: () => discoverSkills({ roots: [block] }) },
      },
      { rounds: 9, iterations: 1, warmup: 2 },
    );

    const smallCount = countingFileSystem();
    await discoverSkills({ roots: [small], fileSystem: smallCount.fileSystem });
    const largeCount = countingFileSystem();
    await discoverSkills({ roots: [large], fileSystem: largeCount.fileSystem });
    let frontmatterBytes = 0;
    for (let index = 0; index < SKILLS; index++) frontmatterBytes += Buffer.byteLength(frontmatter(index));
    const readLimit = frontmatterBytes + SKILLS * FRONTMATTER_CHUNK_BYTES;

    const smallHeap = await retainedHeap(small);
    const largeHeap = await retainedHeap(large);
    const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;
    const kb = (bytes) => `${(bytes / 1024).toFixed(0)} KB`;
    const subjectNs = medians['200 KB bodies'];
    const baselineNs = medians['1 KB bodies'];

    return [
      {
        name: `discover ${COUNT} skills with 200 KB bodies`,
        baseline: 'same, 1 KB bodies',
        baselineNs,
        subjectNs,
        target: 'subject < 300 ms',
        pass: subjectNs < 300e6,
      },
      {
        name: 'discovery time does not grow with body size',
        baseline: 'same, 1 KB bodies',
        baselineNs,
        subjectNs,
        target: '≤ 1.5×',
        pass: subjectNs <= baselineNs * 1.5,
      },
      {
        name: `discover ${COUNT} skills whose frontmatter needs the full YAML parser`,
        baseline: 'plain frontmatter (fast path), 1 KB bodies',
        baselineNs,
        subjectNs: medians['block scalars'],
        note: 'description as a |- block scalar, quoted license',
        target: 'report',
        pass: true,
      },
      {
        name: `bytes read by discovery (${COUNT} SKILL.md)`,
        baseline: '1 KB bodies',
        baselineValue: kb(smallCount.counter.bytes),
        subjectValue: kb(largeCount.counter.bytes),
        note: `frontmatter ${kb(frontmatterBytes)}; bodies ${kb(SKILLS * 200 * 1024)}`,
        target: `equal, ≤ frontmatter + ${FRONTMATTER_CHUNK_BYTES} B per skill`,
        pass: smallCount.counter.bytes === largeCount.counter.bytes && largeCount.counter.bytes <= readLimit,
      },
      {
        name: 'heap retained by a discovered source (after GC)',
        baseline: '1 KB bodies',
        baselineValue: mb(smallHeap),
        subjectValue: mb(largeHeap),
        target: 'difference < 2 MB',
        pass: Math.abs(largeHeap - smallHeap) < 2 * 1024 * 1024,
      },
    ];
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
}

module.exports = { run };
runWhenMain(module, run);

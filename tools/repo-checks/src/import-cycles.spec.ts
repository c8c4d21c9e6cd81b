import fs from 'node:fs';
import path from 'node:path';

// No package's sources import themselves in a circle, types included: a
// file's imports (`import … from`, `export … from`, `import type`) must lead
// down, never back to it. A circle makes the load order decide which value
// is still undefined, and hides which of the two files is the lower one.
const workspaceRoot = path.resolve(__dirname, '..', '..', '..');
const packagesDir = path.join(workspaceRoot, 'packages');

function sourceFiles(folder: string): string[] {
  return fs.readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === '__fixtures__' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.test-helper.ts') ? [full] : [];
  });
}

/** The files a file imports by relative path. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const targets: string[] = [];
  for (const match of text.matchAll(/(?:from|import)\s*'(\.{1,2}\/[^']*|\.)'/g)) {
    const base = path.resolve(path.dirname(file), match[1]!);
    const target = [`${base}.ts`, path.join(base, 'index.ts')].find((candidate) => fs.existsSync(candidate));
    if (target !== undefined) targets.push(target);
  }
  return targets;
}

/** The circles of a graph: its strongly connected components of more than one file (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(path.relative(workspaceRoot, member));
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const packages = fs.readdirSync(packagesDir).filter((name) => fs.existsSync(path.join(packagesDir, name, 'src')));

describe('import circles', () => {
  it.each(packages)('%s: no file imports itself through others', (name) => {
    const graph = new Map(sourceFiles(path.join(packagesDir, name, 'src')).map((file) => [file, importsOf(file)] as const));
    expect(circles(graph)).toEqual([]);
  });

  it('finds a circle when there is one', () => {
    const graph = new Map([
      ['/a.ts', ['/b.ts']],
      ['/b.ts', ['/c.ts']],
      ['/c.ts', ['/a.ts']],
      ['/d.ts', ['/a.ts']],
    ]);
    expect(circles(graph).map((circle) => circle.length)).toEqual([3]);
  });
});

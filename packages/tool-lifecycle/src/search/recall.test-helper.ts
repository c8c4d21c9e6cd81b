// The BFCL non-live recall set (see __fixtures__/bfcl-nonlive/SOURCE.md) and
// its fixed split into a tuning part and a held-out part.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeCapability } from '@ca/domain';
import type { ToolDescriptor } from '../tool';

export interface RecallQuestion {
  readonly id: string;
  readonly query: string;
  readonly expected: readonly string[];
}

export const RECALL_FOLDER = join(__dirname, '__fixtures__', 'bfcl-nonlive');

export function recallCatalog(): ToolDescriptor[] {
  const entries = JSON.parse(readFileSync(join(RECALL_FOLDER, 'catalog.json'), 'utf8')) as Omit<ToolDescriptor, 'source' | 'capability'>[];
  return entries.map((entry) => ({ ...entry, source: 'custom', capability: normalizeCapability({}) }));
}

export function recallQuestions(): RecallQuestion[] {
  return JSON.parse(readFileSync(join(RECALL_FOLDER, 'queries.json'), 'utf8')) as RecallQuestion[];
}

/** The split as committed in split.json: question ids of each part. */
export function committedSplit(): { readonly tuning: readonly string[]; readonly heldOut: readonly string[] } {
  return JSON.parse(readFileSync(join(RECALL_FOLDER, 'split.json'), 'utf8')) as { tuning: string[]; heldOut: string[] };
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * The split rule (SOURCE.md): questions that share an expected tool, directly
 * or through other questions, form one group, named by its alphabetically
 * first tool. Groups are taken in order of the FNV-1a hash of that name (then
 * the name), each into the part that holds fewer questions so far, the
 * held-out part on a tie. So no tool a held-out question expects is expected
 * by a tuning question: its wording was never the reason for a change.
 */
export function splitByToolGroups(questions: readonly RecallQuestion[]): { tuning: string[]; heldOut: string[] } {
  const parent = new Map<string, string>();
  const find = (name: string): string => {
    let root = name;
    while (parent.get(root) !== root) root = parent.get(root) as string;
    parent.set(name, root);
    return root;
  };
  for (const question of questions) for (const name of question.expected) if (!parent.has(name)) parent.set(name, name);
  for (const question of questions) {
    for (const name of question.expected.slice(1)) {
      const a = find(question.expected[0]);
      const b = find(name);
      if (a !== b) parent.set(a < b ? b : a, a < b ? a : b);
    }
  }
  const sizes = new Map<string, number>();
  for (const question of questions) {
    const root = find(question.expected[0]);
    sizes.set(root, (sizes.get(root) ?? 0) + 1);
  }
  const order = [...sizes.keys()].sort((a, b) => fnv1a(a) - fnv1a(b) || (a < b ? -1 : 1));
  const heldOutGroups = new Set<string>();
  let tuningSize = 0;
  let heldOutSize = 0;
  for (const root of order) {
    const size = sizes.get(root) as number;
    if (heldOutSize <= tuningSize) {
      heldOutGroups.add(root);
      heldOutSize += size;
    } else {
      tuningSize += size;
    }
  }
  // Each part in the order of queries.json.
  const tuning: string[] = [];
  const heldOut: string[] = [];
  for (const question of questions) (heldOutGroups.has(find(question.expected[0])) ? heldOut : tuning).push(question.id);
  return { tuning, heldOut };
}

export type Recall = Record<1 | 5 | 10, number>;

/** Share (%) of the questions whose expected tools are all in the top 1, 5 and 10. */
export async function recallOf(search: (query: string) => Promise<readonly string[]> | readonly string[], set: readonly RecallQuestion[]): Promise<Recall> {
  const found: Recall = { 1: 0, 5: 0, 10: 0 };
  for (const question of set) {
    const top = await search(question.query);
    for (const k of [1, 5, 10] as const) if (question.expected.every((name) => top.slice(0, k).includes(name))) found[k]++;
  }
  return { 1: (100 * found[1]) / set.length, 5: (100 * found[5]) / set.length, 10: (100 * found[10]) / set.length };
}

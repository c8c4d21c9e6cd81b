// Recall of the runtime's tool search on a public function-calling set (BFCL
// non-live: 769 tools, 1,000 questions; see __fixtures__/bfcl-nonlive/SOURCE.md),
// against the plain BM25 baseline measured in the same run. A question counts
// at k when every one of its expected tools is in the top k. The ranking was
// tuned on the questions at even positions only; the odd ones are held out.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeCapability } from '@ca/domain';
import { PlainBm25 } from './plain-bm25';
import type { ToolDescriptor } from '../tool';
import { ToolSearchIndex } from './tool-search';

interface Question {
  readonly id: string;
  readonly query: string;
  readonly expected: readonly string[];
}

const folder = join(__dirname, '__fixtures__', 'bfcl-nonlive');
const catalog: ToolDescriptor[] = (JSON.parse(readFileSync(join(folder, 'catalog.json'), 'utf8')) as Omit<ToolDescriptor, 'source' | 'capability'>[]).map(
  (entry) => ({ ...entry, source: 'custom', capability: normalizeCapability({}) }),
);
const questions = JSON.parse(readFileSync(join(folder, 'queries.json'), 'utf8')) as Question[];
const heldOut = questions.filter((_, position) => position % 2 === 1);

type Recall = Record<1 | 5 | 10, number>;

async function recallOf(search: (query: string) => Promise<readonly string[]>, set: readonly Question[]): Promise<Recall> {
  const found: Recall = { 1: 0, 5: 0, 10: 0 };
  for (const question of set) {
    const top = await search(question.query);
    for (const k of [1, 5, 10] as const) if (question.expected.every((name) => top.slice(0, k).includes(name))) found[k]++;
  }
  return { 1: (100 * found[1]) / set.length, 5: (100 * found[5]) / set.length, 10: (100 * found[10]) / set.length };
}

describe('tool search recall on BFCL non-live (769 tools, 1,000 questions)', () => {
  const index = new ToolSearchIndex();
  const plain = new PlainBm25(catalog);
  const ours = async (query: string): Promise<string[]> => (await index.search(query, { k: 10 })).map((hit) => hit.name);
  const baseline = async (query: string): Promise<string[]> => plain.search(query, 10);
  let whole: { ours: Recall; baseline: Recall };
  let held: { ours: Recall; baseline: Recall };

  beforeAll(async () => {
    index.update(catalog);
    whole = { ours: await recallOf(ours, questions), baseline: await recallOf(baseline, questions) };
    held = { ours: await recallOf(ours, heldOut), baseline: await recallOf(baseline, heldOut) };
    const row = (recall: Recall): string => `${recall[1].toFixed(1)} / ${recall[5].toFixed(1)} / ${recall[10].toFixed(1)}`;
    console.log(
      `recall@1/5/10 (%), whole set: search ${row(whole.ours)}, plain BM25 ${row(whole.baseline)}; ` +
        `held-out half: search ${row(held.ours)}, plain BM25 ${row(held.baseline)}`,
    );
  });

  it('measures the baseline the data set documents (plain BM25: about 58 / 83 / 90)', () => {
    expect(Math.abs(whole.baseline[1] - 58)).toBeLessThan(1.5);
    expect(Math.abs(whole.baseline[5] - 83)).toBeLessThan(1.5);
    expect(Math.abs(whole.baseline[10] - 90)).toBeLessThan(1.5);
  });

  it('finds at least 87% of the whole set at 5 (59% at 1, 93.5% at 10), 3.5 points or more above the baseline at 5', () => {
    expect(whole.ours[1]).toBeGreaterThanOrEqual(59);
    expect(whole.ours[5]).toBeGreaterThanOrEqual(87);
    expect(whole.ours[10]).toBeGreaterThanOrEqual(93.5);
    expect(whole.ours[5] - whole.baseline[5]).toBeGreaterThanOrEqual(3.5);
  });

  it('finds at least 85% of the held-out half at 5 (58% at 1, 92.5% at 10), 3.5 points or more above the baseline at 5', () => {
    expect(held.ours[1]).toBeGreaterThanOrEqual(58);
    expect(held.ours[5]).toBeGreaterThanOrEqual(85);
    expect(held.ours[10]).toBeGreaterThanOrEqual(92.5);
    expect(held.ours[5] - held.baseline[5]).toBeGreaterThanOrEqual(3.5);
  });
});

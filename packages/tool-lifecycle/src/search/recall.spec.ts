// Recall of the runtime's tool search on a public function-calling set (BFCL
// non-live: 769 tools, 1,000 questions; see __fixtures__/bfcl-nonlive/SOURCE.md),
// against the plain BM25 baseline measured in the same run. A question counts
// at k when every one of its expected tools is in the top k. The questions are
// split by groups of tools (split.json): the ranking may be tuned on the tuning
// part only; the held-out part is never tuned on.
import { PlainBm25 } from './plain-bm25';
import { committedSplit, recallCatalog, recallOf, recallQuestions, splitByToolGroups, type Recall } from './recall.test-helper';
import { ToolSearchIndex } from './tool-search';

const catalog = recallCatalog();
const questions = recallQuestions();
const split = committedSplit();
const byId = new Map(questions.map((question) => [question.id, question]));
const tuning = split.tuning.map((id) => byId.get(id)).filter((question) => question !== undefined);
const heldOut = split.heldOut.map((id) => byId.get(id)).filter((question) => question !== undefined);

describe('the split of BFCL non-live into a tuning part and a held-out part', () => {
  it('is the one its rule makes (split.json is not edited by hand)', () => {
    expect(splitByToolGroups(questions)).toEqual({ tuning: split.tuning, heldOut: split.heldOut });
  });

  it('puts every question in exactly one part, about half in each', () => {
    expect(tuning.length + heldOut.length).toBe(questions.length);
    expect(new Set([...split.tuning, ...split.heldOut]).size).toBe(questions.length);
    expect(Math.abs(tuning.length - heldOut.length)).toBeLessThanOrEqual(20);
  });

  it('gives no held-out question a tool that a tuning question expects', () => {
    const tuned = new Set(tuning.flatMap((question) => question.expected));
    expect(heldOut.flatMap((question) => question.expected).filter((name) => tuned.has(name))).toEqual([]);
  });
});

describe('tool search recall on BFCL non-live (769 tools, 1,000 questions)', () => {
  const index = new ToolSearchIndex();
  const plain = new PlainBm25(catalog);
  const ours = async (query: string): Promise<string[]> => (await index.search(query, { k: 10 })).map((hit) => hit.name);
  const baseline = (query: string): string[] => plain.search(query, 10);
  let whole: { ours: Recall; baseline: Recall };
  let tuned: { ours: Recall; baseline: Recall };
  let held: { ours: Recall; baseline: Recall };

  beforeAll(async () => {
    index.update(catalog);
    whole = { ours: await recallOf(ours, questions), baseline: await recallOf(baseline, questions) };
    tuned = { ours: await recallOf(ours, tuning), baseline: await recallOf(baseline, tuning) };
    held = { ours: await recallOf(ours, heldOut), baseline: await recallOf(baseline, heldOut) };
    const row = (recall: Recall): string => `${recall[1].toFixed(1)} / ${recall[5].toFixed(1)} / ${recall[10].toFixed(1)}`;
    console.log(
      `recall@1/5/10 (%), whole set: search ${row(whole.ours)}, plain BM25 ${row(whole.baseline)}; ` +
        `tuning part: search ${row(tuned.ours)}, plain BM25 ${row(tuned.baseline)}; ` +
        `held-out part: search ${row(held.ours)}, plain BM25 ${row(held.baseline)}`,
    );
  });

  it('measures the baseline the data set documents (plain BM25: about 58 / 83 / 90)', () => {
    expect(Math.abs(whole.baseline[1] - 58)).toBeLessThan(1.5);
    expect(Math.abs(whole.baseline[5] - 83)).toBeLessThan(1.5);
    expect(Math.abs(whole.baseline[10] - 90)).toBeLessThan(1.5);
  });

  it('finds at least 87% of the tuning part at 5 (61% at 1, 92.5% at 10), 6 points or more above the baseline at 5', () => {
    expect(tuned.ours[1]).toBeGreaterThanOrEqual(61);
    expect(tuned.ours[5]).toBeGreaterThanOrEqual(87);
    expect(tuned.ours[10]).toBeGreaterThanOrEqual(92.5);
    expect(tuned.ours[5] - tuned.baseline[5]).toBeGreaterThanOrEqual(6);
  });

  it('finds at least 89.5% of the held-out part at 5 (58.5% at 1, 95.5% at 10), 4 points or more above the baseline at 5', () => {
    expect(held.ours[1]).toBeGreaterThanOrEqual(58.5);
    expect(held.ours[5]).toBeGreaterThanOrEqual(89.5);
    expect(held.ours[10]).toBeGreaterThanOrEqual(95.5);
    expect(held.ours[5] - held.baseline[5]).toBeGreaterThanOrEqual(4);
  });
});

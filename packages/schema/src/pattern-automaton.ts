import type { CodePointRange, PatternNode } from './ecmascript-pattern';
import { complement } from './ecmascript-pattern';

/**
 * Internal: a lazily built deterministic automaton for the patterns JSON
 * Schemas use most (character sets, sequences, alternations, repetitions, `^`
 * and `$`), matching code points as the `u` flag does. Each character of the
 * text costs one table lookup once the automaton has seen it, and at most one
 * pass over the pattern's states when it has not, so a test is linear in the
 * text whatever the pattern: the same guarantee as RE2, whose algorithm this
 * is (a Thompson NFA and its subset construction, cached, with the cache
 * dropped and rebuilt when it grows too large).
 *
 * Patterns with word boundaries or Unicode property classes are not built
 * here ({@link buildPatternAutomaton} returns `undefined`); they run on re2js.
 */
export interface PatternAutomaton {
  /**
   * Whether the pattern matches anywhere in `text`. A text that makes the
   * automaton build more states than its budget for one call (a pattern whose
   * DFA explodes) is handed, after work bounded by that budget, to the
   * fallback (re2js, whose NFA costs less per character there); after a few
   * such texts the pattern stays on the fallback.
   */
  test(text: string): boolean;
}

/** Answers for texts the automaton gives up: the same pattern on another linear-time engine. */
export type AutomatonFallback = (text: string) => boolean;

/** NFA states beyond which a pattern is left to re2js (a repetition count multiplies the states). */
const MAX_NFA_STATES = 4_000;
/** DFA states kept at most; past this the cache is dropped and rebuilt on demand. */
const MAX_DFA_STATES = 1_000;
/** States built in one call beyond which the automaton gives the text up to the fallback. */
const MAX_STATES_BUILT_PER_TEST = 2 * MAX_DFA_STATES;
/** Texts given up after which the pattern stays on the fallback. */
const MAX_GIVE_UPS = 3;
/** Character classes at most (each DFA state holds a transition per class); more, and re2js runs the pattern. */
const MAX_CLASSES = 256;

const CHARACTERS = 0;
const SPLIT = 1;
const START = 2;
const END = 3;
const MATCH = 4;

class TooLarge extends Error {}
class NotBuildable extends Error {}

/** The NFA: parallel arrays indexed by state id. */
class Nfa {
  readonly kinds: number[] = [];
  readonly out: number[] = [];
  readonly alternative: number[] = [];
  readonly ranges: (readonly CodePointRange[] | undefined)[] = [];

  add(kind: number, out: number, alternative = -1, ranges?: readonly CodePointRange[]): number {
    if (this.kinds.length >= MAX_NFA_STATES) throw new TooLarge();
    this.kinds.push(kind);
    this.out.push(out);
    this.alternative.push(alternative);
    this.ranges.push(ranges);
    return this.kinds.length - 1;
  }

  /** The states that match `node` and then continue at `next`; returns the entry state. */
  compile(node: PatternNode, next: number): number {
    switch (node.type) {
      case 'empty':
        return next;
      case 'characters':
        if (node.properties.length > 0) throw new NotBuildable();
        return this.add(CHARACTERS, next, -1, node.negated ? complement(node.ranges) : node.ranges);
      case 'sequence': {
        let entry = next;
        for (let index = node.items.length - 1; index >= 0; index--) entry = this.compile(node.items[index], entry);
        return entry;
      }
      case 'alternation': {
        const entries = node.items.map((item) => this.compile(item, next));
        let entry = entries[entries.length - 1];
        for (let index = entries.length - 2; index >= 0; index--) entry = this.add(SPLIT, entries[index], entry);
        return entry;
      }
      case 'repeat': {
        let entry = next;
        if (node.max === Infinity) {
          const loop = this.add(SPLIT, -1, next);
          this.out[loop] = this.compile(node.item, loop);
          entry = loop;
        } else {
          for (let count = node.min; count < node.max; count++) entry = this.add(SPLIT, this.compile(node.item, entry), next);
        }
        for (let count = 0; count < node.min; count++) entry = this.compile(node.item, entry);
        return entry;
      }
      case 'assertion':
        if (node.kind === 'start') return this.add(START, next);
        if (node.kind === 'end') return this.add(END, next);
        throw new NotBuildable();
    }
  }
}

/** The DFA state at position 0, where `^` holds. */
const INITIAL = 0;
/** Where a transition leads once a call's budget is spent: settled, so the loop stops at once. */
const GIVEN_UP = 1;
/** An entry of the transition tables not computed yet. */
const UNKNOWN = -1;

/**
 * The DFA: each state is a set of NFA states, numbered; transitions live in
 * typed arrays indexed by state number (one row of 128 for ASCII characters,
 * one row per character class for the others), filled in as characters are met.
 */
class LazyDfa implements PatternAutomaton {
  private readonly boundaries: Int32Array;
  private readonly representatives: Int32Array;
  private readonly asciiClasses: Uint16Array;
  readonly classCount: number;
  /** NFA set of a state → its number, for the states built since the last reset. */
  private readonly cache = new Map<string, number>();
  private readonly marks: Int32Array;
  private generation = 0;
  /** States built since the current call began. */
  private built = 0;
  private giveUps = 0;
  /** How many times the states were dropped. */
  private resets = 0;

  private count = 0;
  private capacity = 16;
  /** Character and `$` NFA states of each DFA state, sorted. */
  private sets: Int32Array[] = [];
  /** 1 when a match was reached (the text matches, whatever follows). */
  private matched = new Uint8Array(this.capacity);
  /** 1 when the loop can stop: matched, dead (no thread left, none can start again) or given up. */
  private settled = new Uint8Array(this.capacity);
  /** Whether a match completes at the end of the text: 1, 0, or UNKNOWN. */
  private matchesAtEnd = new Int8Array(this.capacity);
  private asciiNext = new Int32Array(this.capacity * 128);
  private classNext: Int32Array;

  constructor(
    private readonly nfa: Nfa,
    private readonly entry: number,
    private readonly fallback: AutomatonFallback,
  ) {
    const cuts = new Set<number>();
    for (const ranges of nfa.ranges) {
      for (const [low, high] of ranges ?? []) {
        cuts.add(low);
        cuts.add(high + 1);
      }
    }
    cuts.delete(0);
    this.boundaries = Int32Array.from([...cuts].sort((left, right) => left - right));
    this.classCount = this.boundaries.length + 1;
    // Class c holds the code points from representatives[c] up to the next boundary.
    this.representatives = Int32Array.from({ length: this.classCount }, (_, index) => (index === 0 ? 0 : this.boundaries[index - 1]));
    this.asciiClasses = Uint16Array.from({ length: 128 }, (_, codePoint) => this.classOf(codePoint));
    this.marks = new Int32Array(nfa.kinds.length);
    this.classNext = new Int32Array(this.capacity * this.classCount);
    this.closure([entry], true);
    this.addState(new Int32Array(0), false, true);
  }

  test(text: string): boolean {
    if (this.giveUps >= MAX_GIVE_UPS) return this.fallback(text);
    let state = INITIAL;
    const length = text.length;
    this.built = 0;
    for (let index = 0; index < length; index++) {
      if (this.settled[state] === 1) break;
      let codePoint = text.charCodeAt(index);
      if (codePoint < 128) {
        const next = this.asciiNext[state * 128 + codePoint];
        state = next === UNKNOWN ? this.stepAscii(state, codePoint) : next;
        continue;
      }
      if (codePoint >= 0xd800 && codePoint <= 0xdbff && index + 1 < length) {
        const trail = text.charCodeAt(index + 1);
        if (trail >= 0xdc00 && trail <= 0xdfff) {
          codePoint = (codePoint - 0xd800) * 0x400 + (trail - 0xdc00) + 0x10000;
          index++;
        }
      }
      const characterClass = this.classOf(codePoint);
      const next = this.classNext[state * this.classCount + characterClass];
      state = next === UNKNOWN ? this.step(state, characterClass) : next;
    }
    if (this.matched[state] === 1) return true;
    if (state === GIVEN_UP) {
      this.giveUps++;
      return this.fallback(text);
    }
    if (this.matchesAtEnd[state] === UNKNOWN) this.matchesAtEnd[state] = this.completesAtEnd(state) ? 1 : 0;
    return this.matchesAtEnd[state] === 1;
  }

  private classOf(codePoint: number): number {
    // The number of boundaries at or below the code point.
    let low = 0;
    let high = this.boundaries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.boundaries[middle] <= codePoint) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private stepAscii(state: number, codePoint: number): number {
    const characterClass = this.asciiClasses[codePoint];
    const known = this.classNext[state * this.classCount + characterClass];
    const resets = this.resets;
    const next = known === UNKNOWN ? this.step(state, characterClass) : known;
    // After a reset `state` is gone and its number may already name another state: its row is not written.
    if (next !== GIVEN_UP && resets === this.resets) this.asciiNext[state * 128 + codePoint] = next;
    return next;
  }

  private step(state: number, characterClass: number): number {
    // The given-up state is not recorded as a transition: the next call starts with a fresh budget.
    if (++this.built > MAX_STATES_BUILT_PER_TEST) return GIVEN_UP;
    const codePoint = this.representatives[characterClass];
    const seeds: number[] = [];
    for (const id of this.sets[state]) {
      if (this.nfa.kinds[id] === CHARACTERS && contains(this.nfa.ranges[id] as readonly CodePointRange[], codePoint)) seeds.push(this.nfa.out[id]);
    }
    // Unanchored search: a match may also start at the next position.
    seeds.push(this.entry);
    const resets = this.resets;
    if (this.count >= MAX_DFA_STATES) this.reset();
    const next = this.closure(seeds, false);
    if (resets === this.resets) this.classNext[state * this.classCount + characterClass] = next;
    return next;
  }

  /** Drops every state but the initial and given-up ones (RE2 does the same when its cache is full). */
  private reset(): void {
    this.resets++;
    this.cache.clear();
    this.count = GIVEN_UP + 1;
    this.sets.length = this.count;
    this.asciiNext.fill(UNKNOWN, 0, 128);
    this.classNext.fill(UNKNOWN, 0, this.classCount);
  }

  /** The closure of `seeds` (following splits, `^` only at the start, never `$`), as a state number. */
  private closure(seeds: readonly number[], atStart: boolean): number {
    const { kinds, out, alternative } = this.nfa;
    const generation = ++this.generation;
    const kept: number[] = [];
    let matched = false;
    const pending = [...seeds];
    while (pending.length > 0) {
      const id = pending.pop() as number;
      if (this.marks[id] === generation) continue;
      this.marks[id] = generation;
      switch (kinds[id]) {
        case CHARACTERS:
        case END:
          kept.push(id);
          break;
        case SPLIT:
          pending.push(alternative[id], out[id]);
          break;
        case START:
          if (atStart) pending.push(out[id]);
          break;
        case MATCH:
          matched = true;
          break;
      }
    }
    kept.sort((left, right) => left - right);
    if (atStart) return this.addState(Int32Array.from(kept), matched, false);
    const key = `${matched ? 'm' : ''}${kept.join(',')}`;
    let state = this.cache.get(key);
    if (state === undefined) {
      // The entry is always a seed after the start, so an empty set means no thread can ever start again.
      state = this.addState(Int32Array.from(kept), matched, kept.length === 0 && !matched);
      this.cache.set(key, state);
    }
    return state;
  }

  private addState(set: Int32Array, matched: boolean, stops: boolean): number {
    if (this.count === this.capacity) this.grow();
    const state = this.count++;
    this.sets[state] = set;
    this.matched[state] = matched ? 1 : 0;
    this.settled[state] = matched || stops ? 1 : 0;
    this.matchesAtEnd[state] = UNKNOWN;
    this.asciiNext.fill(UNKNOWN, state * 128, state * 128 + 128);
    this.classNext.fill(UNKNOWN, state * this.classCount, (state + 1) * this.classCount);
    return state;
  }

  private grow(): void {
    const capacity = this.capacity * 2;
    const widen = <T extends Uint8Array | Int8Array | Int32Array>(array: T, make: (length: number) => T, width: number): T => {
      const wider = make(capacity * width);
      wider.set(array);
      return wider;
    };
    this.matched = widen(this.matched, (length) => new Uint8Array(length), 1);
    this.settled = widen(this.settled, (length) => new Uint8Array(length), 1);
    this.matchesAtEnd = widen(this.matchesAtEnd, (length) => new Int8Array(length), 1);
    this.asciiNext = widen(this.asciiNext, (length) => new Int32Array(length), 128);
    this.classNext = widen(this.classNext, (length) => new Int32Array(length), this.classCount);
    this.capacity = capacity;
  }

  /** Whether a match completes at the end of the text: through `$`, splits and (at position 0) `^`. */
  private completesAtEnd(state: number): boolean {
    const { kinds, out, alternative } = this.nfa;
    const generation = ++this.generation;
    const pending: number[] = [];
    for (const id of this.sets[state]) if (kinds[id] === END) pending.push(out[id]);
    while (pending.length > 0) {
      const id = pending.pop() as number;
      if (this.marks[id] === generation) continue;
      this.marks[id] = generation;
      switch (kinds[id]) {
        case MATCH:
          return true;
        case SPLIT:
          pending.push(alternative[id], out[id]);
          break;
        case END:
          pending.push(out[id]);
          break;
        case START:
          if (state === INITIAL) pending.push(out[id]);
          break;
      }
    }
    return false;
  }
}

function contains(ranges: readonly CodePointRange[], codePoint: number): boolean {
  for (const [low, high] of ranges) {
    if (codePoint < low) return false;
    if (codePoint <= high) return true;
  }
  return false;
}

/**
 * The automaton of a parsed pattern, or `undefined` when the pattern uses
 * what it does not build (word boundaries, Unicode property classes) or is too
 * large (a repetition count multiplies states): such patterns run on re2js.
 */
export function buildPatternAutomaton(node: PatternNode, fallback: AutomatonFallback): PatternAutomaton | undefined {
  const nfa = new Nfa();
  try {
    const match = nfa.add(MATCH, -1);
    const entry = nfa.compile(node, match);
    const dfa = new LazyDfa(nfa, entry, fallback);
    return dfa.classCount > MAX_CLASSES ? undefined : dfa;
  } catch (error) {
    if (error instanceof TooLarge || error instanceof NotBuildable) return undefined;
    throw error;
  }
}

/**
 * The Porter2 ("English") stemmer of the Snowball project, for one lowercase
 * word of ASCII letters (and apostrophes): `connections`, `connected` and
 * `connecting` all become `connect`, `calculation` and `calculate` become
 * `calcul`. A word with other characters is returned as it is.
 *
 * Algorithm: https://snowballstem.org/algorithms/english/stemmer.html
 */
export function stemEnglish(word: string): string {
  if (word.length <= 2 || !/^[a-z']+$/.test(word)) return word;
  const exception = EXCEPTIONS.get(word);
  if (exception !== undefined) return exception;
  let w = word;
  if (w.charCodeAt(0) === APOSTROPHE) w = w.slice(1);
  if (w.length <= 2) return w;
  // 'Y' marks a y that is a consonant: at the start, or after a vowel.
  if (w[0] === 'y') w = 'Y' + w.slice(1);
  for (let index = 1; index < w.length; index++) {
    if (w[index] === 'y' && isVowel(w, index - 1)) w = w.slice(0, index) + 'Y' + w.slice(index + 1);
  }
  const r1 = regionOne(w);
  const r2 = regionAfter(w, r1);

  // Step 0: possessives.
  if (w.endsWith("'s'")) w = w.slice(0, -3);
  else if (w.endsWith("'s")) w = w.slice(0, -2);
  else if (w.endsWith("'")) w = w.slice(0, -1);

  // Step 1a: plurals.
  if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ied') || w.endsWith('ies')) w = w.length > 4 ? w.slice(0, -2) : w.slice(0, -1);
  else if (w.endsWith('us') || w.endsWith('ss')) {
    // kept as they are
  } else if (w.endsWith('s') && w.length >= 2 && hasVowelBefore(w, w.length - 2)) w = w.slice(0, -1);

  if (STEP_1A_INVARIANTS.has(w)) return w;

  // Step 1b: -ed, -ing.
  const suffix1b = longestSuffix(w, STEP_1B);
  if (suffix1b === 'eed' || suffix1b === 'eedly') {
    if (w.length - suffix1b.length >= r1) w = w.slice(0, -suffix1b.length) + 'ee';
  } else if (suffix1b !== undefined) {
    const stem = w.slice(0, -suffix1b.length);
    if (hasVowelBefore(stem, stem.length)) {
      w = stem;
      if (w.endsWith('at') || w.endsWith('bl') || w.endsWith('iz')) w += 'e';
      else if (DOUBLES.has(w.slice(-2))) w = w.slice(0, -1);
      else if (isShortWord(w, r1)) w += 'e';
    }
  }

  // Step 1c: a final y after a consonant (not the first letter) becomes i.
  if (w.length > 2 && (w.endsWith('y') || w.endsWith('Y')) && !isVowel(w, w.length - 2)) w = w.slice(0, -1) + 'i';

  // Step 2.
  const suffix2 = longestSuffix(w, STEP_2_SUFFIXES);
  if (suffix2 !== undefined && w.length - suffix2.length >= r1) {
    const stem = w.slice(0, -suffix2.length);
    if (suffix2 === 'ogi') {
      if (stem.endsWith('l')) w = stem + 'og';
    } else if (suffix2 === 'li') {
      if (LI_ENDINGS.has(stem[stem.length - 1] ?? '')) w = stem;
    } else {
      w = stem + (STEP_2.get(suffix2) ?? '');
    }
  }

  // Step 3.
  const suffix3 = longestSuffix(w, STEP_3_SUFFIXES);
  if (suffix3 !== undefined && w.length - suffix3.length >= r1) {
    if (suffix3 === 'ative') {
      if (w.length - suffix3.length >= r2) w = w.slice(0, -suffix3.length);
    } else {
      w = w.slice(0, -suffix3.length) + (STEP_3.get(suffix3) ?? '');
    }
  }

  // Step 4.
  const suffix4 = longestSuffix(w, STEP_4);
  if (suffix4 !== undefined && w.length - suffix4.length >= r2) {
    const stem = w.slice(0, -suffix4.length);
    if (suffix4 !== 'ion' || stem.endsWith('s') || stem.endsWith('t')) w = stem;
  }

  // Step 5.
  if (w.endsWith('e')) {
    const at = w.length - 1;
    if (at >= r2 || (at >= r1 && !endsWithShortSyllable(w.slice(0, -1)))) w = w.slice(0, -1);
  } else if (w.endsWith('ll') && w.length - 1 >= r2) {
    w = w.slice(0, -1);
  }
  return w.replace(/Y/g, 'y');
}

const APOSTROPHE = 39;

const EXCEPTIONS = new Map<string, string>([
  ['skis', 'ski'],
  ['skies', 'sky'],
  ['dying', 'die'],
  ['lying', 'lie'],
  ['tying', 'tie'],
  ['idly', 'idl'],
  ['gently', 'gentl'],
  ['ugly', 'ugli'],
  ['early', 'earli'],
  ['only', 'onli'],
  ['singly', 'singl'],
  ['sky', 'sky'],
  ['news', 'news'],
  ['howe', 'howe'],
  ['atlas', 'atlas'],
  ['cosmos', 'cosmos'],
  ['bias', 'bias'],
  ['andes', 'andes'],
]);

const STEP_1A_INVARIANTS = new Set(['inning', 'outing', 'canning', 'herring', 'earring', 'proceed', 'exceed', 'succeed']);
const STEP_1B = ['eedly', 'ingly', 'edly', 'eed', 'ing', 'ed'];
const DOUBLES = new Set(['bb', 'dd', 'ff', 'gg', 'mm', 'nn', 'pp', 'rr', 'tt']);
const LI_ENDINGS = new Set(['c', 'd', 'e', 'g', 'h', 'k', 'm', 'n', 'r', 't']);

const STEP_2 = new Map<string, string>([
  ['ization', 'ize'],
  ['ational', 'ate'],
  ['fulness', 'ful'],
  ['ousness', 'ous'],
  ['iveness', 'ive'],
  ['tional', 'tion'],
  ['biliti', 'ble'],
  ['lessli', 'less'],
  ['entli', 'ent'],
  ['ation', 'ate'],
  ['alism', 'al'],
  ['aliti', 'al'],
  ['ousli', 'ous'],
  ['iviti', 'ive'],
  ['fulli', 'ful'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['abli', 'able'],
  ['izer', 'ize'],
  ['ator', 'ate'],
  ['alli', 'al'],
  ['bli', 'ble'],
  ['ogi', 'og'],
  ['li', ''],
]);
const STEP_2_SUFFIXES = [...STEP_2.keys()];

const STEP_3 = new Map<string, string>([
  ['ational', 'ate'],
  ['tional', 'tion'],
  ['alize', 'al'],
  ['icate', 'ic'],
  ['iciti', 'ic'],
  ['ative', ''],
  ['ical', 'ic'],
  ['ness', ''],
  ['ful', ''],
]);
const STEP_3_SUFFIXES = [...STEP_3.keys()];

const STEP_4 = ['ement', 'ance', 'ence', 'able', 'ible', 'ment', 'ant', 'ent', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize', 'ion', 'al', 'er', 'ic'];

/** The longest of `suffixes` (each list is ordered longest first within a shared ending) that `word` ends with. */
function longestSuffix(word: string, suffixes: readonly string[]): string | undefined {
  let found: string | undefined;
  for (const suffix of suffixes) {
    if (word.endsWith(suffix) && (found === undefined || suffix.length > found.length)) found = suffix;
  }
  return found;
}

function isVowel(word: string, index: number): boolean {
  const letter = word[index];
  return letter === 'a' || letter === 'e' || letter === 'i' || letter === 'o' || letter === 'u' || letter === 'y';
}

/** Whether `word[0, end)` holds a vowel. */
function hasVowelBefore(word: string, end: number): boolean {
  for (let index = 0; index < end; index++) if (isVowel(word, index)) return true;
  return false;
}

/** Start of R1: after the first non-vowel that follows a vowel (with the algorithm's three prefixes). */
function regionOne(word: string): number {
  for (const prefix of ['gener', 'commun', 'arsen']) if (word.startsWith(prefix)) return prefix.length;
  return regionAfter(word, 0);
}

function regionAfter(word: string, start: number): number {
  for (let index = start + 1; index < word.length; index++) {
    if (!isVowel(word, index) && isVowel(word, index - 1)) return index + 1;
  }
  return word.length;
}

/** A short syllable at the end: non-vowel, vowel, non-vowel other than w, x or Y; or vowel, non-vowel at the start of a two-letter word. */
function endsWithShortSyllable(word: string): boolean {
  const length = word.length;
  if (length === 2) return isVowel(word, 0) && !isVowel(word, 1);
  if (length < 3) return false;
  const last = word[length - 1];
  return !isVowel(word, length - 3) && isVowel(word, length - 2) && !isVowel(word, length - 1) && last !== 'w' && last !== 'x' && last !== 'Y';
}

function isShortWord(word: string, r1: number): boolean {
  return r1 >= word.length && endsWithShortSyllable(word);
}

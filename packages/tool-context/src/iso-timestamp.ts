// Shape and field ranges only: Date.parse costs more than the rest of recording a trace.
const ISO_8601 = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/**
 * True for an ISO-8601 date-time with a zone, such as `new Date().toISOString()`
 * returns. Checks the shape and the range of each field (not, say, February 30).
 */
export function isIsoTimestamp(value: unknown): value is string {
  // The runtime hands out one timestamp string per millisecond, so most
  // checks see the string they saw last.
  if (value === lastValid) return true;
  if (typeof value !== 'string' || !ISO_8601.test(value)) return false;
  lastValid = value;
  return true;
}

let lastValid = '\u0000';

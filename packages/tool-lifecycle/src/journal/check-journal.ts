import { ToolInvalidArgumentError } from '../errors';
import type { CallJournal } from './call-journal';

/**
 * A journal handed to the runtime or a plan, checked.
 * @throws ToolInvalidArgumentError when it is not a CallJournal.
 */
export function checkJournal(journal: unknown, argument: string): CallJournal {
  const candidate = journal as Partial<CallJournal> | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.record !== 'function' ||
    typeof candidate.description !== 'string' ||
    (candidate.find !== undefined && typeof candidate.find !== 'function')
  ) {
    throw new ToolInvalidArgumentError({ argument, expected: 'a CallJournal: { description, record(entry, call), find?(planId, key) }', received: journal });
  }
  return candidate as CallJournal;
}

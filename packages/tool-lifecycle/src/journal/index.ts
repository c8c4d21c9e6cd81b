// The call journal: where a plan's calls are recorded when they are decided and when they end,
// so that a plan made again (here, or resumed on another host) runs no step twice.
export type { CallJournal, InterruptedCall, JournalCall, JournalEntry, JournaledError, JournalOutcome, JournalReply } from './call-journal';
export { MemoryCallJournal, MEMORY_JOURNAL_MAX_RECORDS } from './memory-call-journal';
export type { JournalRecord, MemoryCallJournalOptions } from './memory-call-journal';
export { changesOf, journalError, replayedResult, restoreChanges, resultOutcome, reviveError, thrownOutcome } from './journaled-outcome';
export { checkJournal } from './check-journal';

// The seams through which sources ask a person (forms, URLs) or a model (sampling).
export { approvalThroughInteraction } from './approval-interaction';
export type { ApprovalFormAnswer, ApprovalThroughInteractionOptions } from './approval-interaction';
export { INTERACTION_HANDLER } from './interaction-handler';
export type {
  FormInteraction,
  InteractionContext,
  InteractionHandler,
  InteractionRequest,
  InteractionResponse,
  InteractionValues,
  UrlInteraction,
} from './interaction-handler';
export { SAMPLING_HANDLER } from './sampling-handler';
export type {
  SamplingContent,
  SamplingContext,
  SamplingHandler,
  SamplingMessage,
  SamplingModelPreferences,
  SamplingRequest,
  SamplingResult,
} from './sampling-handler';

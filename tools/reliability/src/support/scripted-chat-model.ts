// A LangChain chat model that answers with the messages it was given, in order (then 'done'):
// the only scripted part of the suites that drive LangChain's own agent loop.
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';

export class ScriptedChatModel extends BaseChatModel {
  constructor(private readonly replies: AIMessage[]) {
    super({});
  }
  _llmType(): string {
    return 'scripted';
  }
  override bindTools(): this {
    return this;
  }
  async _generate(): Promise<ChatResult> {
    const message = this.replies.shift() ?? new AIMessage('done');
    return { generations: [{ message, text: '' }] };
  }
}

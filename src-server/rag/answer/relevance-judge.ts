/**
 * The chat model as the judge of "do these sources answer the question?": the grounded
 * prompt (same system message, same numbered sources, same question — so the answer that
 * follows reuses the evaluated prefix) with one more line asking for yes or no, scored by
 * `InferenceEngine.scoreChoices` from the first token's logits. Retrieval evidence cannot
 * tell a question about the corpus's topic that the corpus does not answer from one it
 * does (their similarities overlap completely); reading the sources can.
 */
import type { ChatMessage } from "../../engine/types.js";
import { groundedMessages, type PromptSource } from "./grounded-prompt.js";

export const JUDGE_CHOICES = ["yes", "no"] as const;

const JUDGE_INSTRUCTION = "Before answering: do the sources above contain the information needed to answer this question? Reply with only yes or no.";

export function judgeMessages(question: string, sources: PromptSource[]): ChatMessage[] {
  const messages = groundedMessages(question, sources);
  const last = messages.at(-1)!;
  return [...messages.slice(0, -1), { role: "user", content: `${last.content}\n\n${JUDGE_INSTRUCTION}` }];
}

/**
 * Token counts of text for a model whose tokenizer lives on another machine (a remote
 * model), before the upstream has counted: what rate limits reserve and chunking cuts by.
 *
 * A bounded estimate, biased high: one token per three bytes of UTF-8, plus the chat
 * template's few tokens per message. Byte-level BPE tokenizers (Llama 3, Qwen 2.5, SmolLM2,
 * Gemma) make tokens of about four bytes in English and Malay prose, and never fewer than one
 * byte each, so for those languages the estimate lands above the true count (measured against
 * llama-server's own /tokenize in test/integration/remote-models.test.ts). Admission settles to
 * the upstream's reported usage when the answer ends, so an over-estimate costs nothing but
 * headroom for the length of one request.
 */
import type { ChatGenerationInput } from "../types.js";

const BYTES_PER_TOKEN = 3;
/** Role markers and separators a chat template adds per message. */
const PER_MESSAGE = 8;
/** The template's start and the assistant header that opens the reply. */
const PER_PROMPT = 16;

export function estimateTextTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / BYTES_PER_TOKEN);
}

export function estimateChatTokens(input: Pick<ChatGenerationInput, "messages" | "tools" | "toolChoice">): number {
  let tokens = PER_PROMPT;
  for (const message of input.messages) {
    tokens += PER_MESSAGE;
    if (message.role === "assistant") {
      tokens += estimateTextTokens(message.content ?? "");
      for (const call of message.toolCalls) tokens += estimateTextTokens(call.name) + estimateTextTokens(call.arguments) + PER_MESSAGE;
    } else tokens += estimateTextTokens(message.content);
  }
  if (input.tools.length > 0 && input.toolChoice !== "none") tokens += estimateTextTokens(JSON.stringify(input.tools)) + PER_MESSAGE;
  return tokens;
}

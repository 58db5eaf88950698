/**
 * How likely a chat model is to begin its reply with each of a few short choices
 * ("yes" / "no"): the prompt is rendered with the chat template, evaluated once, and the
 * logits of each choice's first token read — no sampling, no generation. A classifier
 * out of any instruction-tuned model, used by the relevance gate.
 *
 * The prompt is evaluated from an empty sequence (the same prompt always gets the same
 * scores); a chat generation that follows on the same sequence with the same beginning
 * (the grounded answer after its judge) reuses that evaluation.
 */
import type { LlamaModel, Token } from "node-llama-cpp";
import { invalidInput } from "../errors.js";
import type { ChatSlot } from "./chat-run.js";
import { toLlamaHistory } from "./chat-history.js";
import type { ChatMessage, ChoiceScores } from "./types.js";

/** Spellings of a choice the model may start with: as given, capitalised, lower and upper case, after a space. */
export function choiceSpellings(choice: string): string[] {
  const trimmed = choice.trim();
  const capitalised = trimmed.charAt(0).toUpperCase() + trimmed.slice(1).toLowerCase();
  const forms = new Set([trimmed, trimmed.toLowerCase(), capitalised, trimmed.toUpperCase()]);
  return [...forms].flatMap((form) => [form, ` ${form}`]);
}

/**
 * The first token of each spelling of each choice. A token shared by two choices (their
 * spellings begin alike) would make the scores meaningless: a programming error.
 */
export function choiceTokens(model: Pick<LlamaModel, "tokenize">, choices: readonly string[]): Token[][] {
  if (choices.length < 2) throw new Error("give at least two choices to score");
  const owner = new Map<Token, number>();
  return choices.map((choice, index) => {
    if (choice.trim() === "") throw new Error("a choice is empty");
    const tokens = new Set<Token>();
    for (const spelling of choiceSpellings(choice)) {
      const first = model.tokenize(spelling, false, "trimLeadingSpace")[0];
      const spaced = spelling.startsWith(" ") ? model.tokenize(spelling, false)[0] : undefined;
      for (const token of [first, spaced]) {
        if (token === undefined) continue;
        const other = owner.get(token);
        if (other !== undefined && other !== index) {
          throw new Error(`choices '${choices[other]}' and '${choice}' begin with the same token; they cannot be told apart`);
        }
        owner.set(token, index);
        tokens.add(token);
      }
    }
    return [...tokens];
  });
}

/** Softmax over choices, each choice's mass the log-sum-exp of its tokens' logits. */
export function choiceProbabilities(logits: ReadonlyMap<Token, number>, tokens: readonly Token[][]): number[] {
  const masses = tokens.map((group) => {
    const values = group.map((t) => logits.get(t)).filter((v): v is number => v !== undefined && Number.isFinite(v));
    if (values.length === 0) return -Infinity;
    const max = Math.max(...values);
    return max + Math.log(values.reduce((s, v) => s + Math.exp(v - max), 0));
  });
  const top = Math.max(...masses);
  if (!Number.isFinite(top)) return tokens.map(() => 1 / tokens.length);
  const weights = masses.map((m) => Math.exp(m - top));
  const total = weights.reduce((s, w) => s + w, 0);
  return weights.map((w) => w / total);
}

export async function scoreChoicesOn(slot: ChatSlot, model: LlamaModel, messages: ChatMessage[], choices: string[], signal: AbortSignal): Promise<ChoiceScores> {
  const groups = choiceTokens(model, choices);
  const history = [...toLlamaHistory(messages), { type: "model" as const, response: [] }];
  const { contextText } = slot.wrapper.generateContextState({ chatHistory: history });
  const tokens = contextText.tokenize(model.tokenizer);
  if (tokens.length >= slot.contextSize) {
    throw invalidInput(`This model's context is ${slot.contextSize} tokens per request, but the messages take ${tokens.length} tokens. Shorten the messages.`, "context_length_exceeded", { in: "messages" });
  }
  const sequence = await slot.pool.acquire(signal);
  try {
    signal.throwIfAborted();
    // Always from an empty sequence: a prompt evaluated in other batch splits (after a reused
    // prefix) gets slightly different logits on llama.cpp's CPU kernels — measured 0.61 vs 0.65
    // for the same question — and a judge must give the same question the same score.
    await sequence.clearHistory();
    const pending = tokens;
    const filter = { tokens: groups.flat() };
    const input = pending.map((token, i) => (i === pending.length - 1 ? ([token, { generateNext: { logits: { filter } } }] as [Token, object]) : token));
    const output = await sequence.controlledEvaluate(input);
    const logits = output[pending.length - 1]?.next.logits;
    if (!logits) throw new Error("llama.cpp returned no logits for the last prompt token");
    return { probabilities: choiceProbabilities(logits, groups), promptTokens: tokens.length };
  } finally {
    slot.pool.release(sequence);
  }
}

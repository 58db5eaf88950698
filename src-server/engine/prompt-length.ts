/**
 * Prompts refused by their length in characters, before anything tokenises them. No token
 * of a byte-pair (BPE) or SentencePiece vocabulary stands for more characters of the input
 * than its longest piece has (a piece is its text as stored in the GGUF, byte-level or
 * "▁"-escaped, never shorter than the text it covers), and those tokenizers drop nothing:
 * so text longer than `context × longest piece` characters cannot fit in `context` tokens,
 * and is refused in microseconds instead of tokenised for seconds. Like `/v1/embeddings`'
 * cap on an input's characters, but derived from the model. Chat prompts are measured as
 * the chat template renders them (string concatenation, under 25 ms for 7.5 MB even through
 * a Jinja template), so what a template trims or drops is not counted and tools are.
 * WordPiece and Unigram tokenizers fold or drop text (white space, accents; an unknown word
 * is one token), so no such bound holds for them and nothing is refused here.
 */
import { LlamaVocabularyType, SpecialTokensText, type LlamaModel, type LlamaText } from "node-llama-cpp";
import { invalidInput, type InputLocation } from "../errors.js";

const longestPiece = new WeakMap<LlamaModel, number | null>();

/**
 * The most characters (UTF-16 code units) one token of `model` can stand for; null for a
 * tokenizer that may fold or drop text. Computed once per model (a few ms for 262k pieces).
 */
export function maxTokenChars(model: LlamaModel): number | null {
  const known = longestPiece.get(model);
  if (known !== undefined) return known;
  let longest: number | null = null;
  const pieces: unknown = model.fileInfo.metadata.tokenizer?.ggml?.tokens;
  if ((model.vocabularyType === LlamaVocabularyType.bpe || model.vocabularyType === LlamaVocabularyType.spm) && Array.isArray(pieces) && pieces.length > 0) {
    longest = 1;
    for (const piece of pieces) if (typeof piece === "string" && piece.length > longest) longest = piece.length;
  }
  longestPiece.set(model, longest);
  return longest;
}

/** Characters of a rendered prompt's text (a special token given by name counts for none). */
export function llamaTextChars(text: LlamaText): number {
  let chars = 0;
  for (const value of text.values) {
    if (typeof value === "string") chars += value.length;
    else if (value instanceof SpecialTokensText) chars += value.value.length;
  }
  return chars;
}

/** What the refusal names: the text measured, and what the caller should shorten. */
export interface MeasuredText {
  /** E.g. `the messages as the chat template renders them`. */
  text: string;
  /** E.g. `the messages`. */
  shorten: string;
}

/**
 * 400 `context_length_exceeded` when `chars` characters cannot fit in `contextSize` tokens of
 * `model` (see the module comment).
 */
export function refuseOverlong(model: LlamaModel, contextSize: number, chars: number, what: MeasuredText, location: InputLocation): void {
  const perToken = maxTokenChars(model);
  if (perToken === null) return;
  const most = contextSize * perToken;
  if (chars <= most) return;
  throw invalidInput(
    `This model's context is ${contextSize} tokens per request and none of its tokens stands for more than ${perToken} characters, so at most ${most} characters can fit (${what.text}: ${chars} characters). Shorten ${what.shorten}.`,
    "context_length_exceeded",
    location,
  );
}

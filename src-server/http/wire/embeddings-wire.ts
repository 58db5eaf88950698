/** OpenAI embeddings wire format. */
import { z } from "zod";
import type { EmbeddingList } from "../../contract/index.js";
import { invalidRequest } from "../../errors.js";

/** Longest single input string accepted before tokenising (characters). */
export const MAX_INPUT_CHARS = 1_000_000;

export const EmbeddingsRequestSchema = z
  .object({
    model: z.string().min(1).max(256).optional(),
    input: z.union([
      z.string(),
      z.array(z.string()),
      // Token arrays are recognised so they can be refused with a useful message.
      z.array(z.number()),
      z.array(z.array(z.number())),
    ]),
    encoding_format: z.enum(["float", "base64"]).default("float"),
    dimensions: z.number().int().positive().optional(),
    user: z.string().max(256).optional(),
  })
  .strict();

export type WireEmbeddingsRequest = z.infer<typeof EmbeddingsRequestSchema>;

/** The input as a list of non-empty strings, or a 400 saying what is wrong. */
export function inputStrings(input: WireEmbeddingsRequest["input"]): string[] {
  const list = typeof input === "string" ? [input] : input;
  if (list.length === 0) throw invalidRequest("input must not be an empty array", "invalid_parameter", "input");
  return list.map((item, i) => {
    const param = typeof input === "string" ? "input" : `input.${i}`;
    if (typeof item !== "string") {
      throw invalidRequest(
        "token-id inputs are not supported: ids from another tokenizer mean nothing to this model. Send strings (in LangChain, set check_embedding_ctx_length=False).",
        "unsupported_input_type",
        param,
      );
    }
    if (item.length === 0) throw invalidRequest(`${param} must not be an empty string`, "invalid_parameter", param);
    if (item.length > MAX_INPUT_CHARS) throw invalidRequest(`${param} is longer than ${MAX_INPUT_CHARS} characters`, "context_length_exceeded", param);
    return item;
  });
}

/** Little-endian float32 bytes, base64: what the OpenAI SDKs decode. */
export function toBase64(vector: Float32Array): string {
  const bytes = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
  // Float32Array is host-endian; every platform Node supports here is little-endian.
  return bytes.toString("base64");
}

/** Powers of ten a double holds exactly (10^22 is the last). */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * A float32 as a number of at most 9 significant digits that reads back as the same float32:
 * `Array.from` of a Float32Array prints each value as the double it widens to (17 digits,
 * `0.012345678918361664`), where 9 digits are all a float32 holds (`0.0123456789`). The
 * response is about a third smaller and parses twice as fast, with no bit of the vector lost.
 */
export function float32Decimal(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const k = 8 - Math.floor(Math.log10(Math.abs(x)));
  // 1e-14 to 1e9 (every component of a unit vector but the tiniest): an exact scale.
  if (k < 0 || k > 22) return Number(x.toPrecision(9));
  const scale = POW10[k]!;
  return Math.round(x * scale) / scale;
}

export function embeddingsObject(model: string, vectors: Float32Array[], format: "float" | "base64", promptTokens: number): EmbeddingList {
  return {
    object: "list",
    data: vectors.map((vector, index) => ({
      object: "embedding" as const,
      index,
      embedding: format === "base64" ? toBase64(vector) : Array.from(vector, float32Decimal),
    })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

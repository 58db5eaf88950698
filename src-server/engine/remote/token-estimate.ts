/**
 * Token counts of text for a model whose tokenizer lives on another machine (a remote
 * model), before the upstream has counted: what rate limits reserve, and what chunking
 * cuts passages by for a remote embedder (a passage longer than the embedder takes fails).
 *
 * An estimate biased high: a token per digit (Gemma, Qwen and Llama tokenizers split numbers
 * into single digits or short groups, so figures cost the most), and for the rest its UTF-8
 * bytes divided by the fewest bytes a token of this tokenizer took on a calibration sample of
 * English and Malay prose (less 15%), plus the chat template's few tokens per message. Tokenizers differ most on Malay (measured on the
 * evaluation documents with llama-server's /tokenize): SmolLM2's English-centric vocabulary
 * takes a token per 2.4–2.7 bytes of Malay and 4.4–4.8 of English, Qwen 2.5's 2.9–3.3 and
 * 4.2–5.1, Gemma 3's 3.5–4.3 and 4.6–5.0.
 * Upstreams that tokenize (llama-server, vLLM) are calibrated at their first health check;
 * others get 2 bytes a token, which covers every tokenizer measured. Admission settles to the
 * upstream's reported usage when the answer ends, so an over-estimate costs headroom for the
 * length of one request, never tokens.
 */
import type { ChatGenerationInput } from "../types.js";

/** Role markers and separators a chat template adds per message. */
const PER_MESSAGE = 8;
/** The template's start and the assistant header that opens the reply. */
const PER_PROMPT = 16;
/** Bytes per token assumed for a tokenizer that was not measured (below every one measured). */
export const UNMEASURED_BYTES_PER_TOKEN = 2;

/**
 * Prose the calibration tokenizes, one sample per language (the smallest bytes-per-token
 * of the samples decides): a gazette-style notice in Malay and its English.
 */
export const CALIBRATION_SAMPLES: readonly string[] = [
  "Kerajaan Negeri dengan ini memaklumkan bahawa permohonan bantuan banjir bagi isi rumah yang terjejas hendaklah dikemukakan kepada Pejabat Daerah dalam tempoh tiga puluh hari dari tarikh notis ini. Pemohon dikehendaki melampirkan salinan kad pengenalan, bukti pemilikan atau penyewaan kediaman, dan laporan kerosakan yang disahkan oleh ketua kampung. Permohonan yang tidak lengkap tidak akan diproses.",
  "The State Government hereby gives notice that applications for flood assistance by affected households shall be submitted to the District Office within thirty days of the date of this notice. Applicants are required to attach a copy of their identity card, proof of ownership or tenancy of the residence, and a damage report certified by the village head. Incomplete applications will not be processed.",
];

export class TokenEstimator {
  constructor(
    /** Bytes of UTF-8 per token, at least: the estimate divides by it. */
    readonly bytesPerToken = UNMEASURED_BYTES_PER_TOKEN,
    /** True when measured on the upstream's own tokenizer. */
    readonly calibrated = false,
  ) {}

  /** From the calibration samples and the tokens the upstream counted for each. */
  static calibrate(counts: readonly number[]): TokenEstimator {
    const ratios = CALIBRATION_SAMPLES.map((sample, i) => {
      const digits = countDigits(sample);
      return (Buffer.byteLength(sample, "utf8") - digits) / Math.max(1, (counts[i] ?? 0) - digits);
    });
    const fewest = Math.min(...ratios) * 0.85;
    return new TokenEstimator(Math.min(6, Math.max(1, fewest)), true);
  }

  text = (text: string): number => {
    const digits = countDigits(text);
    return digits + Math.ceil((Buffer.byteLength(text, "utf8") - digits) / this.bytesPerToken);
  };

  chat(input: Pick<ChatGenerationInput, "messages" | "tools" | "toolChoice">): number {
    let tokens = PER_PROMPT;
    for (const message of input.messages) {
      tokens += PER_MESSAGE;
      if (message.role === "assistant") {
        tokens += this.text(message.content ?? "");
        for (const call of message.toolCalls) tokens += this.text(call.name) + this.text(call.arguments) + PER_MESSAGE;
      } else tokens += this.text(message.content);
    }
    if (input.tools.length > 0 && input.toolChoice !== "none") tokens += this.text(JSON.stringify(input.tools)) + PER_MESSAGE;
    return tokens;
  }
}

function countDigits(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}

const unmeasured = new TokenEstimator();

/** Estimates with an unmeasured tokenizer. */
export const estimateTextTokens = (text: string): number => unmeasured.text(text);
export const estimateChatTokens = (input: Pick<ChatGenerationInput, "messages" | "tools" | "toolChoice">): number => unmeasured.chat(input);

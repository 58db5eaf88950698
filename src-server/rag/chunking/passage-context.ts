/**
 * What a passage cannot say for itself: which document and which section it comes from.
 * A passage in the middle of a report ("The budget rose by 12%…") has lost the title and
 * headings that tell what it is about, so neither its embedding nor its words match a
 * question that names the subject. The document's title and the passage's enclosing
 * headings are therefore put before the text that is embedded and keyword-analysed
 * (a contextual chunk header). The stored, shown and cited text stays the passage itself.
 */
import { foldShouting } from "../../models/embedding-prompts.js";

/** At most this many tokens of context per passage (reserved from the chunk size when a document has any). */
export const CONTEXT_MAX_TOKENS = 48;

const SEPARATOR = " › ";

const normalize = (s: string) => s.replace(/\s+/g, " ").trim();

/**
 * The context line of a passage: the title, then the enclosing headings, outermost first,
 * leaving out what the passage already says (the opening passage holds the title; a passage
 * that starts a section holds its heading) and repeats (a title that is also the first heading).
 * A title or heading in capitals is lowered (`foldShouting`), each on its own: the passage's
 * own case would otherwise keep a shouted title shouting in the line embedded.
 */
export function passageContext(title: string | null, headingPath: readonly string[], text: string): string {
  const body = normalize(text).toLowerCase();
  const parts: string[] = [];
  for (const raw of [title ?? "", ...headingPath]) {
    const part = normalize(raw);
    const key = part.toLowerCase();
    if (!part || body.includes(key) || parts.some((p) => p.toLowerCase() === key)) continue;
    parts.push(foldShouting(part));
  }
  return parts.join(SEPARATOR);
}

/**
 * The context cut to `maxTokens`: the innermost headings go first, then words from the end,
 * so what is left is the most general part (the title). Empty when nothing fits.
 */
export function fitContext(context: string, maxTokens: number, countTokens: (text: string) => number): string {
  if (!context || maxTokens <= 0) return "";
  if (countTokens(context) <= maxTokens) return context;
  const parts = context.split(SEPARATOR);
  while (parts.length > 1) {
    parts.pop();
    const joined = parts.join(SEPARATOR);
    if (countTokens(joined) <= maxTokens) return joined;
  }
  const words = parts[0]!.split(" ");
  // Binary search on the number of words kept (token counts grow with words).
  let lo = 0;
  let hi = words.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (countTokens(words.slice(0, mid).join(" ")) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return words.slice(0, lo).join(" ");
}

/** The text that is embedded and keyword-analysed for a passage: its context line, a blank line, the passage. */
export function withContext(context: string | undefined, text: string): string {
  return context ? `${context}\n\n${text}` : text;
}

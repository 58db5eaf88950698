/**
 * The prompt for grounded answers: numbered sources, an instruction to answer only from
 * them and to cite them as [n], and the question. Plus what to say when nothing fits.
 */
import type { ChatMessage } from "../../engine/types.js";
import { analyzeQueryWithLanguage } from "../retrieval/keyword-analysis.js";

export interface PromptSource {
  index: number;
  filename: string;
  pageStart: number | null;
  pageEnd: number | null;
  headingPath: string[];
  text: string;
}

/**
 * Malay or not, for canned replies: the keyword analyser's language detection (function
 * words and affixes of each language; the question's names and numbers count for neither).
 */
export function looksMalay(text: string): boolean {
  return analyzeQueryWithLanguage(text).language === "ms";
}

/** The answer when the corpus holds nothing relevant, in the question's language. */
export function notInCorpusAnswer(question: string): string {
  return looksMalay(question)
    ? "Korpus ini tidak mengandungi maklumat untuk menjawab soalan ini."
    : "The corpus does not contain information that answers this question.";
}

export function groundedMessages(question: string, sources: PromptSource[]): ChatMessage[] {
  const listed = sources
    .map((s) => {
      const pages = s.pageStart === null ? null : s.pageEnd !== null && s.pageEnd !== s.pageStart ? `pages ${s.pageStart}–${s.pageEnd}` : `page ${s.pageStart}`;
      const where = [s.filename, pages, s.headingPath.length ? s.headingPath.join(" > ") : null].filter(Boolean).join(", ");
      return `[${s.index}] (${where})\n${s.text.trim()}`;
    })
    .join("\n\n");
  const system =
    "You answer questions using only the numbered sources provided. " +
    "Cite the sources you use with their numbers in square brackets, like [1] or [2][3], right after the statements they support. " +
    "If the sources do not contain the answer, say that the corpus does not contain it; never invent an answer. " +
    "Answer in the language of the question (English or Bahasa Melayu), briefly.";
  return [
    { role: "system", content: system },
    { role: "user", content: `Sources:\n\n${listed}\n\nQuestion: ${question}` },
  ];
}

/** Source numbers the answer cites, e.g. "… [1] … [2][3]" → {1, 2, 3}. */
export function citedIndexes(answer: string, count: number): Set<number> {
  const cited = new Set<number>();
  for (const match of answer.matchAll(/\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g)) {
    for (const n of match[1]!.split(",")) {
      const index = Number(n.trim());
      if (index >= 1 && index <= count) cited.add(index);
    }
  }
  return cited;
}

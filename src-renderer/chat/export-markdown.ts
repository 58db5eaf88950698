/** A conversation as Markdown with its citations: the fallback when the server cannot export it. */
import type { ConversationWithMessages } from "../api/contract.js";

export function conversationMarkdown(c: ConversationWithMessages): string {
  const lines = [`# ${c.title}`, ""];
  for (const m of c.messages) {
    lines.push(m.role === "user" ? "## Question" : "## Answer", "", m.content, "");
    const cited = (m.citations ?? []).filter((x) => x.cited);
    if (cited.length > 0) {
      lines.push("### Sources", "");
      for (const x of cited) {
        const page = x.page_start !== null ? `, p. ${x.page_start}${x.page_end !== null && x.page_end !== x.page_start ? `–${x.page_end}` : ""}` : "";
        lines.push(`[${x.index}] ${x.filename}${page}`, "", ...x.text.split("\n").map((l) => `> ${l}`), "");
      }
    }
  }
  return lines.join("\n");
}

import { describe, expect, it } from "vitest";
import { findPassageSpans, isPdf } from "./pdf-highlight.js";
import { splitCitations } from "./remark-citations.js";
import { safeHref } from "./safe-link.js";
import { chatHistory } from "./chat-message.js";

describe("findPassageSpans", () => {
  const spans = ["2. Regional ", "Revenue", "Revenue by region, in thou", "sands of ringgit:", "North", "1,200", "Footer"];

  it("finds a passage split across spans regardless of spacing and case", () => {
    expect(findPassageSpans(spans, "revenue by region,  in thousands\nof ringgit")).toEqual([2, 3]);
  });

  it("ignores Markdown marks the parser added", () => {
    expect(findPassageSpans(spans, "## 2. Regional Revenue")).toEqual([0, 1]);
  });

  it("falls back to the start of a long passage that does not match whole", () => {
    const passage = "Revenue by region, in thousands of ringgit: North 1,200 " + "x".repeat(200);
    expect(findPassageSpans(spans, passage)[0]).toBe(2);
  });

  it("returns nothing when the passage is not on the page", () => {
    expect(findPassageSpans(spans, "Laporan banjir Kelantan")).toEqual([]);
  });

  it("recognises PDFs", () => {
    expect(isPdf("application/pdf", "x")).toBe(true);
    expect(isPdf(null, "Report.PDF")).toBe(true);
    expect(isPdf("text/plain", "notes.txt")).toBe(false);
  });
});

describe("splitCitations", () => {
  it("turns known [n] markers into indexes and leaves the rest", () => {
    expect(splitCitations("Banjir [1] melanda [2, 3]. Lihat [9] dan [a].", new Set([1, 2, 3]))).toEqual(["Banjir ", 1, " melanda ", 2, 3, ". Lihat [9] dan [a]."]);
  });
});

describe("safeHref", () => {
  it("keeps http(s) and drops every other scheme", () => {
    expect(safeHref("https://example.org/a")).toBe("https://example.org/a");
    expect(safeHref("http://x.test")).toBe("http://x.test/");
    expect(safeHref("javascript:alert(1)")).toBeNull();
    expect(safeHref("file:///etc/passwd")).toBeNull();
    expect(safeHref("data:text/html,hi")).toBeNull();
    expect(safeHref("/relative")).toBeNull();
  });
});

describe("chatHistory", () => {
  it("sends earlier turns without failed answers, then the question", () => {
    const base = { citations: null, grounded: null, model: null, stopped: false };
    const history = chatHistory(
      [
        { key: "1", role: "user", content: "Hai", ...base },
        { key: "2", role: "assistant", content: "Hello!", ...base },
        { key: "3", role: "user", content: "again", ...base },
        { key: "4", role: "assistant", content: "", error: new Error("x"), ...base },
      ],
      "Apa khabar?",
    );
    expect(history).toEqual([
      { role: "user", content: "Hai" },
      { role: "assistant", content: "Hello!" },
      { role: "user", content: "again" },
      { role: "user", content: "Apa khabar?" },
    ]);
  });
});

import { fireEvent, screen, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Citation, OcrPage, RagDocument } from "../api/contract.js";
import { apiError, json, renderWithApp } from "../test-utils/render.js";
import { SourcePanel } from "./SourcePanel.js";

const passage = "Bekalan air di Klang akan terganggu pada 14 Mac 2024 dari jam 9.00 pagi hingga 6.00 petang kerana kerja penyelenggaraan paip utama.";
const supportText = "14 Mac 2024 dari jam 9.00 pagi";
const citation: Citation = { index: 1, document_id: "doc_img", chunk_id: "chk_1", filename: "notis-air-klang.png", text: passage, score: 0.71, page: 1, page_start: 1, page_end: 1, heading_path: ["NOTIS GANGGUAN BEKALAN AIR"], metadata: {}, cited: true, support: { page: 1, start: passage.indexOf(supportText), end: passage.indexOf(supportText) + supportText.length } };

/** The notice's words as Tesseract boxes them on the 1100 × 560 image (lines at 120, 156, 210 px). */
function noticeWords(): OcrPage["words"] {
  const lines = ["NOTIS GANGGUAN BEKALAN AIR", "Bekalan air di Klang akan terganggu pada 14 Mac 2024 dari jam 9.00 pagi", "hingga 6.00 petang kerana kerja penyelenggaraan paip utama.", "Water supply in Klang will be interrupted on 14 March 2024"];
  const words: OcrPage["words"] = [];
  lines.forEach((line, l) => {
    let x = 64;
    for (const text of line.split(" ")) {
      const w = text.length * 12;
      words.push({ text, box: [x, 52 + l * 45, w, 28], confidence: 93 });
      x += w + 10;
    }
  });
  return words;
}
const ocrPage: OcrPage = { object: "rag.ocr_page", document_id: "doc_img", page: 1, width: 1100, height: 560, confidence: 91.6, words: noticeWords() };
const imageDoc = (confidence: number): RagDocument => ({ id: "doc_img", object: "rag.document", corpus_id: "corp_1", filename: "notis-air-klang.png", content_type: "image/png", bytes: 40_000, sha256: "0".repeat(64), status: "indexed", error: null, page_count: 1, chunk_count: 1, metadata: {}, created_at: 1, indexed_at: 2, parent_document_id: null, relation: null, position: null, children: { attachments: 0, messages: 0 }, ocr: { engine: "tesseract 5.3.0", languages: ["eng", "msa"], pages: [{ page: 1, reason: "image", confidence, words: 40, deskewed: 2.5 }] } });
const chunk = { id: "chk_1", object: "rag.chunk", document_id: "doc_img", filename: "notis-air-klang.png", content_type: "image/png", index: 0, text: passage, page_start: 1, page_end: 1, heading_path: [], before: null, after: null };
const png = () => new Response(new Uint8Array([0x89, 0x50, 0x4e, 0x47]), { status: 200, headers: { "content-type": "image/png" } });

describe("SourcePanel on a page OCR read", () => {
  const made: string[] = [];
  const revoked = vi.fn();
  beforeEach(() => {
    // jsdom has no object URLs: count them so the test sees each one revoked.
    vi.stubGlobal("URL", Object.assign(URL, { createObjectURL: vi.fn(() => `blob:test/${made.push("x")}`), revokeObjectURL: revoked }));
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it("shows an image document's page from the API with the cited words' OCR boxes over it, says it was read by OCR and how sure, and gives the text below", async () => {
    const { server, unmount } = renderWithApp(<SourcePanel source={{ corpusId: "corp_1", citation }} onClose={() => undefined} />, {
      credential: "psk-desktop",
      routes: {
        "GET /v1/rag/corpora/corp_1/chunks/chk_1": () => json(chunk),
        "GET /v1/rag/corpora/corp_1/documents/doc_img": () => json(imageDoc(91.6)),
        "GET /v1/rag/corpora/corp_1/documents/doc_img/pages/1/image": png,
        "GET /v1/rag/corpora/corp_1/documents/doc_img/pages/1/ocr": () => json(ocrPage),
      },
    });
    const panel = screen.getByRole("complementary");
    expect(await within(panel).findByRole("note")).toHaveTextContent("Text read by OCR from page 1 · confidence 92% · page straightened 2.5°");
    const img = await waitFor(() => panel.querySelector<HTMLImageElement>(".image-page img"));
    expect(img.getAttribute("src")).toMatch(/^blob:test\//);
    fireEvent.load(img);
    const pageView = await within(panel).findByRole("img", { name: "Page 1, the cited words highlighted" });
    const boxes = [...pageView.querySelectorAll<HTMLElement>(".ocr-hl")];
    // Every word of the passage: line 2 and line 3 of the notice, 22 words.
    expect(boxes).toHaveLength(22);
    expect(pageView.querySelectorAll(".ocr-hl.support")).toHaveLength(7);
    for (const b of boxes) {
      const [left, top, width, height] = [b.style.left, b.style.top, b.style.width, b.style.height].map(parseFloat) as [number, number, number, number];
      expect(left).toBeGreaterThanOrEqual(0);
      expect(top).toBeGreaterThan(10);
      expect(left + width).toBeLessThanOrEqual(100);
      expect(top + height).toBeLessThan(60);
    }
    expect(pageView.querySelector(".ocr-overlay")).toHaveAttribute("aria-hidden", "true");
    // The words are there for a screen reader as text, the supporting part marked.
    const text = within(panel).getByRole("region", { name: "The cited text, as OCR read it" });
    expect(text).toHaveTextContent(passage);
    expect(within(text).getByText(supportText).tagName).toBe("STRONG");
    // The image came through the API client, with its credential.
    const imageCall = server.calls.find((c) => c.path.endsWith("/pages/1/image"))!;
    expect(imageCall.headers.get("authorization")).toBe("Bearer psk-desktop");
    unmount();
    expect(revoked).toHaveBeenCalledWith(img.getAttribute("src"));
  });

  it("flags a page read with low confidence, and in Malay", async () => {
    renderWithApp(<SourcePanel source={{ corpusId: "corp_1", citation }} onClose={() => undefined} />, {
      locale: "ms",
      routes: {
        "GET /v1/rag/corpora/corp_1/chunks/chk_1": () => json(chunk),
        "GET /v1/rag/corpora/corp_1/documents/doc_img": () => json(imageDoc(58.2)),
        "GET /v1/rag/corpora/corp_1/documents/doc_img/pages/1/image": png,
        "GET /v1/rag/corpora/corp_1/documents/doc_img/pages/1/ocr": () => json({ ...ocrPage, confidence: 58.2 }),
      },
    });
    const note = await screen.findByRole("note");
    expect(note).toHaveClass("low");
    expect(note).toHaveTextContent("Teks dibaca dengan OCR daripada halaman 1 pada keyakinan rendah (58%)");
    expect(screen.getByRole("region", { name: "Teks yang dirujuk, seperti yang dibaca oleh OCR" })).toBeInTheDocument();
  });

  it("still shows the page when OCR's words cannot be had, and says why nothing is highlighted", async () => {
    renderWithApp(<SourcePanel source={{ corpusId: "corp_1", citation }} onClose={() => undefined} />, {
      routes: {
        "GET /v1/rag/corpora/corp_1/chunks/chk_1": () => json(chunk),
        "GET /v1/rag/corpora/corp_1/documents/doc_img": () => json(imageDoc(90)),
        "GET /v1/rag/corpora/corp_1/documents/doc_img/pages/1/image": png,
        "GET /v1/rag/corpora/corp_1/documents/doc_img/pages/1/ocr": () => apiError(404, "page_not_ocr", "'notis-air-klang.png' has no page read by OCR", "not_found_error"),
      },
    });
    expect(await screen.findByText(/Where OCR's words are on this page is not available/)).toBeInTheDocument();
    const img = await waitFor(() => globalThis.document.querySelector<HTMLImageElement>(".image-page img"));
    fireEvent.load(img);
    expect(await screen.findByRole("img", { name: "Page 1" })).toBeInTheDocument();
    expect(globalThis.document.querySelectorAll(".ocr-hl")).toHaveLength(0);
  });

  it("shows a text document's passage in its context as before, asking for no page image", async () => {
    const text: Citation = { ...citation, document_id: "doc_txt", filename: "notis.md", page: null, page_start: null, page_end: null };
    const { server } = renderWithApp(<SourcePanel source={{ corpusId: "corp_1", citation: text }} onClose={() => undefined} />, {
      routes: {
        "GET /v1/rag/corpora/corp_1/chunks/chk_1": () => json({ ...chunk, document_id: "doc_txt", filename: "notis.md", content_type: "text/markdown", page_start: null, page_end: null, before: "Makluman.", after: null }),
        "GET /v1/rag/corpora/corp_1/documents/doc_txt": () => json({ ...imageDoc(90), id: "doc_txt", filename: "notis.md", content_type: "text/markdown", ocr: null }),
      },
    });
    expect(await screen.findByText("Makluman.")).toBeInTheDocument();
    expect(screen.queryByRole("note")).toBeNull();
    expect(server.calls.some((c) => c.path.includes("/pages/"))).toBe(false);
  });
});


async function waitFor<T>(get: () => T | null | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = get();
    if (value) return value;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("timed out");
}

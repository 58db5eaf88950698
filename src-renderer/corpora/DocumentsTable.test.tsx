import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { RagDocument } from "../api/contract.js";
import { apiError, json, renderWithApp } from "../test-utils/render.js";
import { CorpusDetail } from "./CorpusDetail.js";

const corpus = { id: "corp_1", object: "rag.corpus", name: "Notis dan e-mel", chunking: "semantic", embedding_model: "e5", dimensions: 384, rerank_model: null, search_defaults: null, ocr_languages: ["eng", "msa"], status: "ready", document_counts: { queued: 0, processing: 0, indexed: 0, failed: 0, total: 0 }, chunk_count: 40, retention_days: 30, metadata: {}, created_at: 1, updated_at: 1 };
const doc = (id: string, filename: string, extra: Partial<RagDocument> = {}): RagDocument => ({ id, object: "rag.document", corpus_id: "corp_1", filename, content_type: "application/pdf", bytes: 2048, sha256: "0".repeat(64), status: "indexed", error: null, page_count: null, chunk_count: 2, metadata: {}, created_at: 1_710_000_000, indexed_at: 1_710_000_001, parent_document_id: null, relation: null, position: null, children: { attachments: 0, messages: 0 }, ocr: null, ...extra });

const scan = doc("doc_scan", "notis-air-klang.pdf", {
  page_count: 3,
  ocr: {
    engine: "tesseract 5.3.0",
    languages: ["eng", "msa"],
    pages: [
      { page: 1, reason: "no_text_layer", confidence: 91.4, words: 300, deskewed: 2.5 },
      { page: 3, reason: "garbled_text_layer", confidence: 64, words: 100 },
    ],
  },
});
const faint = doc("doc_faint", "faint-fax.png", { content_type: "image/png", page_count: 1, ocr: { engine: "tesseract 5.3.0", languages: ["msa"], pages: [{ page: 1, reason: "image", confidence: 52.2, words: 80 }] } });
const eml = doc("doc_eml", "mesyuarat.eml", { content_type: "message/rfc822", children: { attachments: 2, messages: 0 } });
const attachments = [doc("doc_att1", "minit.pdf", { parent_document_id: "doc_eml", relation: "attachment", position: 0 }), doc("doc_att2", "bajet.xlsx", { parent_document_id: "doc_eml", relation: "attachment", position: 1, content_type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" })];
const mbox = doc("doc_mbox", "peti-masuk.mbox", { content_type: "application/mbox", children: { attachments: 0, messages: 120 } });
const messages = Array.from({ length: 120 }, (_, i) => doc(`doc_m${String(i).padStart(3, "0")}`, `Mesej ${i + 1}: laporan harian.eml`, { parent_document_id: "doc_mbox", relation: "message", position: i, content_type: "message/rfc822" }));
const all = [scan, faint, eml, ...attachments, mbox, ...messages];

/** The list route: the uploads (`parent_document_id=none`), or one page of one document's children (`parent_document_id`, `after`, `limit`). */
function documentsRoute(call: { path: string }) {
  const url = new URL(call.path, "http://x");
  const parent = url.searchParams.get("parent_document_id");
  if (!parent) throw new Error(`the workbench lists every document at once: ${call.path}`);
  if (parent === "none") {
    const uploads = all.filter((d) => d.parent_document_id === null);
    return json({ object: "list", data: uploads, first_id: uploads[0]!.id, last_id: uploads.at(-1)!.id, has_more: false });
  }
  const children = all.filter((d) => d.parent_document_id === parent);
  const after = url.searchParams.get("after");
  const start = after ? children.findIndex((d) => d.id === after) + 1 : 0;
  const limit = Number(url.searchParams.get("limit") ?? 20);
  const data = children.slice(start, start + limit);
  return json({ object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < children.length });
}

const ocrStatus = { object: "rag.ocr", available: true, engine: "tesseract", version: "5.3.0", languages: ["eng", "msa"], default_languages: ["eng", "msa"], reason: null };
const routes = {
  "GET /v1/rag/corpora/corp_1": () => json({ ...corpus, document_counts: { queued: 0, processing: 0, indexed: all.length, failed: 0, total: all.length } }),
  "GET /v1/rag/corpora/corp_1/documents": documentsRoute,
  "GET /v1/rag/ocr": () => json(ocrStatus),
};

describe("DocumentsTable", () => {
  it("shows what OCR read: pages and mean confidence on the row, each page with its reason, confidence and straightening in the details; low confidence flagged", async () => {
    const user = userEvent.setup();
    renderWithApp(<CorpusDetail corpusId="corp_1" />, { routes });
    const table = await screen.findByRole("table");
    const scanRow = within(table).getByText("notis-air-klang.pdf").closest("tr")!;
    // Mean weighted by words: (91.4 × 300 + 64 × 100) / 400 = 84.55.
    const chip = within(scanRow).getByRole("button", { name: /notis-air-klang\.pdf was read by OCR: 2 pages, mean confidence 85%/ });
    expect(chip).toHaveTextContent("OCR · 2 pages · 85%");
    const faintRow = within(table).getByText("faint-fax.png").closest("tr")!;
    expect(within(faintRow).getByRole("button", { name: /read by OCR with low confidence/ })).toHaveTextContent("OCR · 1 page · 52%low confidence");
    expect(within(table).getByText("mesyuarat.eml").closest("tr")!.querySelector(".ocr-chip")).toBeNull();

    await user.click(chip);
    const dialog = await screen.findByRole("dialog", { name: "OCR of notis-air-klang.pdf" });
    expect(dialog).toHaveTextContent("Tesseract 5.3.0 read 2 of 3 pages in English + Bahasa Melayu; mean confidence 85%.");
    expect(dialog).toHaveTextContent("Pages below 70% confidence (3) may hold misread words");
    const rows = within(within(dialog).getByRole("table", { name: "Pages read by OCR" })).getAllByRole("row").slice(1);
    expect(rows.map((r) => [...r.querySelectorAll("th, td")].map((c) => c.textContent))).toEqual([
      ["1", "No text layer", "91%", "300", "straightened 2.5°"],
      ["3", "Garbled text layer", "64% low confidence", "100", "—"],
    ]);
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("folds an e-mail's attachments and a mailbox's messages under them, and pages through thousands of messages", async () => {
    const user = userEvent.setup();
    const { server } = renderWithApp(<CorpusDetail corpusId="corp_1" />, { routes });
    const table = await screen.findByRole("table");
    // Only the uploads are rows; what came out of them is folded.
    expect(within(table).getAllByRole("row")).toHaveLength(1 + 4);
    expect(within(table).queryByText("minit.pdf")).toBeNull();

    const attachmentsFold = within(table).getByRole("button", { name: "2 attachments — mesyuarat.eml" });
    expect(attachmentsFold).toHaveAttribute("aria-expanded", "false");
    await user.click(attachmentsFold);
    expect(attachmentsFold).toHaveAttribute("aria-expanded", "true");
    const minit = (await within(table).findByText("minit.pdf")).closest("tr")!;
    expect(minit).toHaveTextContent(/^Attachment: minit\.pdf/);
    // The attachments sit right under their e-mail.
    const names = () => within(table).getAllByRole("row").slice(1).map((r) => r.querySelector(".doc-name")?.textContent);
    expect(names()).toEqual(["notis-air-klang.pdf", "faint-fax.png", "mesyuarat.eml", "minit.pdf", "bajet.xlsx", "peti-masuk.mbox"]);

    await user.click(within(table).getByRole("button", { name: "120 messages — peti-masuk.mbox" }));
    await within(table).findByText("Mesej 50: laporan harian.eml");
    expect(within(table).queryByText("Mesej 51: laporan harian.eml")).toBeNull();
    expect(within(table).getByText("Mesej 1: laporan harian.eml").closest("tr")).toHaveTextContent(/^Message: Mesej 1/);
    await user.click(within(table).getByRole("button", { name: "Show 50 more from peti-masuk.mbox (70 not shown)" }));
    await within(table).findByText("Mesej 100: laporan harian.eml");
    await user.click(within(table).getByRole("button", { name: "Show 20 more from peti-masuk.mbox (20 not shown)" }));
    await within(table).findByText("Mesej 120: laporan harian.eml");
    expect(within(table).queryByRole("button", { name: /Show .* more/ })).toBeNull();
    const pages = server.calls.filter((c) => c.path.includes("parent_document_id=doc_mbox"));
    expect(pages.map((c) => new URL(c.path, "http://x").searchParams.get("after"))).toEqual([null, "doc_m049", "doc_m099"]);
    expect(pages.every((c) => c.path.includes("limit=50"))).toBe(true);

    // Folding hides the messages again.
    await user.click(within(table).getByRole("button", { name: "120 messages — peti-masuk.mbox" }));
    expect(within(table).queryByText("Mesej 1: laporan harian.eml")).toBeNull();
  });

  it("warns that deleting an e-mail deletes its attachments, and names each failed document's relation in the failed list", async () => {
    const user = userEvent.setup();
    const failedAttachment = doc("doc_att3", "rosak.docx", { parent_document_id: "doc_eml", relation: "attachment", position: 2, status: "failed", error: { code: "corrupt_document", message: "not a zip" } });
    const emlOfThree = { ...eml, children: { attachments: 3, messages: 0 } };
    renderWithApp(<CorpusDetail corpusId="corp_1" />, {
      routes: {
        ...routes,
        "GET /v1/rag/corpora/corp_1": () => json({ ...corpus, document_counts: { queued: 0, processing: 0, indexed: 3, failed: 1, total: 4 } }),
        "GET /v1/rag/corpora/corp_1/documents": (call) => json({ object: "list", data: call.path.includes("status=failed") ? [failedAttachment] : [emlOfThree], first_id: null, last_id: null, has_more: false }),
      },
    });
    const table = await screen.findByRole("table");
    expect(within(table).getByRole("button", { name: "3 attachments — mesyuarat.eml" })).toBeInTheDocument();
    await user.click(within(table).getByRole("button", { name: "Delete mesyuarat.eml" }));
    expect(await screen.findByRole("alertdialog")).toHaveTextContent("The 3 documents that came out of it (attachments, messages) are deleted with it.");
    await user.click(screen.getByRole("button", { name: "Cancel" }));

    await user.click(screen.getByRole("button", { name: "Failed (1)" }));
    const row = (await within(screen.getByRole("table")).findByText("rosak.docx")).closest("tr")!;
    expect(row).toHaveTextContent(/^Attachment: rosak\.docx/);
    expect(row).toHaveTextContent("The file is damaged or not what its name says.");
  });

  it("says so when a mailbox's messages cannot be fetched, and tries again on request", async () => {
    const user = userEvent.setup();
    let fail = true;
    renderWithApp(<CorpusDetail corpusId="corp_1" />, {
      routes: {
        ...routes,
        "GET /v1/rag/corpora/corp_1/documents": (call) => (call.path.includes("parent_document_id=doc_mbox") && fail ? apiError(503, "server_busy", "the server is busy", "service_unavailable_error") : documentsRoute(call)),
      },
    });
    const table = await screen.findByRole("table");
    await user.click(within(table).getByRole("button", { name: "120 messages — peti-masuk.mbox" }));
    expect(await within(table).findByRole("alert")).toHaveTextContent("The server is busy with other requests.");
    fail = false;
    await user.click(within(table).getByRole("button", { name: "Try again" }));
    expect(await within(table).findByText("Mesej 1: laporan harian.eml")).toBeInTheDocument();
  });

  it("reads in Malay", async () => {
    renderWithApp(<CorpusDetail corpusId="corp_1" />, { routes, locale: "ms" });
    const table = await screen.findByRole("table");
    expect(within(table).getByRole("button", { name: "2 lampiran — mesyuarat.eml" })).toBeInTheDocument();
    expect(within(table).getByRole("button", { name: "120 mesej — peti-masuk.mbox" })).toBeInTheDocument();
    expect(within(table).getByText("faint-fax.png").closest("tr")!).toHaveTextContent("OCR · 1 halaman · 52%keyakinan rendah");
  });
});

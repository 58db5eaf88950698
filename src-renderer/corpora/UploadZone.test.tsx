import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { RagDocument } from "../api/contract.js";
import { json, renderWithApp, sseResponse } from "../test-utils/render.js";
import { CorpusDetail } from "./CorpusDetail.js";

const corpus = { id: "corp_1", object: "rag.corpus", name: "Notis", chunking: "semantic", embedding_model: "e5", dimensions: 384, rerank_model: null, search_defaults: null, ocr_languages: ["eng", "msa"], status: "empty", document_counts: { queued: 0, processing: 0, indexed: 0, failed: 0, total: 0 }, chunk_count: 0, retention_days: 30, metadata: {}, created_at: 1, updated_at: 1 };
const ocrStatus = { object: "rag.ocr", available: true, engine: "tesseract", version: "5.3.0", languages: ["eng", "msa"], default_languages: ["eng", "msa"], reason: null };
const scan: RagDocument = { id: "doc_scan", object: "rag.document", corpus_id: "corp_1", filename: "notis.pdf", content_type: "application/pdf", bytes: 52_000, sha256: "0".repeat(64), status: "queued", error: null, page_count: null, chunk_count: 0, metadata: {}, created_at: 1, indexed_at: null, parent_document_id: null, relation: null, position: null, children: { attachments: 0, messages: 0 }, ocr: null };
const event = (data: object) => `data: ${JSON.stringify(data)}\n\n`;
const empty = () => json({ object: "list", data: [], first_id: null, last_id: null, has_more: false });

describe("UploadZone", () => {
  it("lists what it accepts, grouped, with how scans are read in the corpus's languages", async () => {
    renderWithApp(<CorpusDetail corpusId="corp_1" />, { routes: { "GET /v1/rag/corpora/corp_1": () => json(corpus), "GET /v1/rag/corpora/corp_1/documents": empty, "GET /v1/rag/ocr": () => json(ocrStatus) } });
    const list = (await screen.findAllByRole("definition"))[0]!.closest("dl")!;
    expect(list).toHaveAccessibleName("Accepted files");
    const groups = [...list.querySelectorAll(".format-group")].map((g) => [g.querySelector("dt")!.textContent, g.querySelector("dd")!.textContent]);
    expect(groups.map((g) => g[0])).toEqual(["Documents", "Spreadsheets and slides", "E-mail", "Scans and images"]);
    expect(groups[0]![1]).toBe("PDF · DOCX · DOC · ODT · EPUB · HTML · MD · TXT");
    expect(groups[1]![1]).toBe("XLSX · XLS · ODS · CSV · TSV · PPTX · PPT");
    expect(groups[2]![1]).toMatch(/^EML · MSG · MBOX — attachments and a mailbox's messages become documents of their own$/);
    expect(await within(list).findByText(/read by OCR in English \+ Bahasa Melayu/)).toBeInTheDocument();
    expect(screen.getByText(/DOC, XLS and PPT \(Office 97–2003\) are converted by LibreOffice/)).toBeInTheDocument();
    // The picker offers them all; the button is described by the list.
    const accept = screen.getByTestId("file-input").getAttribute("accept")!.split(",");
    for (const ext of [".pdf", ".docx", ".doc", ".pptx", ".xlsx", ".ods", ".csv", ".tsv", ".odt", ".epub", ".eml", ".mbox", ".msg", ".png", ".jpg", ".tif", ".tiff", ".xls", ".ppt"]) expect(accept).toContain(ext);
    expect(screen.getByRole("button", { name: "Choose files…" })).toHaveAccessibleDescription(/Scans and images/);
  });

  it("says when the server cannot read scans", async () => {
    renderWithApp(<CorpusDetail corpusId="corp_1" />, {
      routes: { "GET /v1/rag/corpora/corp_1": () => json(corpus), "GET /v1/rag/corpora/corp_1/documents": empty, "GET /v1/rag/ocr": () => json({ ...ocrStatus, available: false, engine: null, languages: [], reason: "No OCR engine is installed" }) },
    });
    expect(await screen.findByText(/OCR is not available on this server, so scans and images cannot be read/)).toHaveClass("format-note", "warn");
  });

  it("shows a scan being read page by page, and a refused file with its reason", async () => {
    // As a file dropped on the zone (or picked with "All files"): the picker's filter does not apply.
    const user = userEvent.setup({ applyAccept: false });
    renderWithApp(<CorpusDetail corpusId="corp_1" />, {
      routes: {
        "GET /v1/rag/corpora/corp_1": () => json(corpus),
        "GET /v1/rag/corpora/corp_1/documents": empty,
        "GET /v1/rag/ocr": () => json(ocrStatus),
        "POST /v1/rag/corpora/corp_1/documents": () =>
          json(
            {
              object: "rag.upload",
              corpus_id: "corp_1",
              documents: [scan],
              rejected: [{ filename: "setup.exe", error: { code: "unsupported_file_type", message: "setup.exe is not a type Pustaka reads: upload PDF, DOCX, … or TIF" } }],
            },
            202,
          ),
        "GET /v1/rag/corpora/corp_1/events": () =>
          sseResponse([
            event({ object: "rag.document.status", document_id: "doc_scan", status: "processing", error: null, chunk_count: 0 }),
            event({ object: "rag.document.progress", document_id: "doc_scan", stage: "parsing", done: 0, total: 1, ocr: false }),
            event({ object: "rag.document.progress", document_id: "doc_scan", stage: "parsing", done: 0, total: 12, ocr: true }),
            event({ object: "rag.document.progress", document_id: "doc_scan", stage: "parsing", done: 1, total: 12, ocr: true }),
            event({ object: "rag.document.progress", document_id: "doc_scan", stage: "parsing", done: 2, total: 12, ocr: true }),
          ]),
      },
    });
    await screen.findByRole("heading", { level: 1 });
    await user.upload(screen.getByTestId("file-input"), [new File(["%PDF-1.4"], "notis.pdf", { type: "application/pdf" }), new File(["MZ"], "setup.exe")]);
    const uploads = await screen.findByRole("region", { name: "Uploads" });
    const row = (await within(uploads).findByText("notis.pdf")).closest("li")!;
    expect(await within(row).findByText("Reading page 3 of 12 (OCR)")).toBeInTheDocument();
    expect(within(row).getByRole("progressbar")).toHaveAttribute("aria-valuetext", "Reading page 3 of 12 (OCR)");
    const refused = within(uploads).getByText("setup.exe").closest("li")!;
    expect(refused).toHaveTextContent("Rejected");
    expect(refused).toHaveTextContent("This type of file is not supported. The accepted types are listed in the upload area.");
    expect(refused).toHaveTextContent("setup.exe is not a type Pustaka reads");
  });
});

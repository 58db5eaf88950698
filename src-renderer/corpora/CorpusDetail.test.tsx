import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { json, renderWithApp } from "../test-utils/render.js";
import { CorpusDetail } from "./CorpusDetail.js";

const corpus = { id: "corp_1", object: "rag.corpus", name: "Laporan banjir", chunking: "semantic", embedding_model: "e5", dimensions: 384, rerank_model: null, search_defaults: null, status: "ready", document_counts: { queued: 0, processing: 0, indexed: 2, failed: 1, total: 3 }, chunk_count: 12, retention_days: 30, metadata: {}, created_at: 1, updated_at: 1 };
const doc = (id: string, filename: string, status: string, error: unknown = null) => ({ id, object: "rag.document", corpus_id: "corp_1", filename, content_type: "text/plain", bytes: 10, sha256: "0".repeat(64), status, error, chunk_count: status === "indexed" ? 3 : 0, metadata: {}, created_at: 1, indexed_at: status === "indexed" ? 2 : null });
const docs = [doc("doc_1", "a.txt", "indexed"), doc("doc_2", "b.txt", "indexed"), doc("doc_3", "rosak.pdf", "failed", { code: "document_too_complex", message: "the PDF could not be parsed" })];

describe("CorpusDetail", () => {
  it("does not let a failed document hide behind 'ready': the header counts it and one click lists only the failed ones", async () => {
    const user = userEvent.setup();
    const { server } = renderWithApp(<CorpusDetail corpusId="corp_1" />, {
      routes: {
        "GET /v1/rag/corpora/corp_1": () => json(corpus),
        "GET /v1/rag/corpora/corp_1/documents": (call) => json({ object: "list", data: call.path.includes("status=failed") ? docs.filter((d) => d.status === "failed") : docs, first_id: null, last_id: null, has_more: false }),
      },
    });
    expect(await screen.findByRole("heading", { level: 1, name: /Laporan banjir/ })).toHaveTextContent("Ready");
    const table = await screen.findByRole("table");
    expect(within(table).getByText("a.txt")).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "1 failed" }));
    expect(screen.getByRole("button", { name: "Failed (1)" })).toHaveAttribute("aria-pressed", "true");
    await screen.findByText("rosak.pdf");
    expect(within(screen.getByRole("table")).queryByText("a.txt")).toBeNull();
    expect(server.calls.some((c) => c.path.includes("/documents?") && c.path.includes("status=failed"))).toBe(true);
    await user.click(screen.getByRole("button", { name: "All (3)" }));
    expect(await within(screen.getByRole("table")).findByText("a.txt")).toBeInTheDocument();
  });

  it("shows no filter when nothing failed", async () => {
    renderWithApp(<CorpusDetail corpusId="corp_1" />, {
      routes: {
        "GET /v1/rag/corpora/corp_1": () => json({ ...corpus, document_counts: { queued: 0, processing: 0, indexed: 2, failed: 0, total: 2 } }),
        "GET /v1/rag/corpora/corp_1/documents": () => json({ object: "list", data: docs.slice(0, 2), first_id: null, last_id: null, has_more: false }),
      },
    });
    await screen.findByRole("table");
    expect(screen.queryByRole("group", { name: "Show documents" })).toBeNull();
  });
});

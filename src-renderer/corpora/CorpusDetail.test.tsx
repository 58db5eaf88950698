import { fireEvent, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { json, renderWithApp } from "../test-utils/render.js";
import { CorpusDetail } from "./CorpusDetail.js";

const corpus = { id: "corp_1", object: "rag.corpus", name: "Laporan banjir", chunking: "semantic", embedding_model: "e5", dimensions: 384, rerank_model: null, search_defaults: null, status: "ready", document_counts: { queued: 0, processing: 0, indexed: 2, failed: 1, total: 3 }, chunk_count: 12, retention_days: 30, metadata: {}, created_at: 1, updated_at: 1 };
const doc = (id: string, filename: string, status: string, error: unknown = null) => ({ id, object: "rag.document", corpus_id: "corp_1", filename, content_type: "text/plain", bytes: 10, sha256: "0".repeat(64), status, error, chunk_count: status === "indexed" ? 3 : 0, metadata: {}, created_at: 1, indexed_at: status === "indexed" ? 2 : null, parent_document_id: null, relation: null, position: null, children: { attachments: 0, messages: 0 }, ocr: null });
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

  it("edits the corpus's search settings: words only, then hybrid with its weight and trust rule, then back to the server's", async () => {
    const user = userEvent.setup();
    let current: unknown = null;
    const { server } = renderWithApp(<CorpusDetail corpusId="corp_1" />, {
      routes: {
        "GET /v1/rag/corpora/corp_1": () => json({ ...corpus, search_defaults: current }),
        "PATCH /v1/rag/corpora/corp_1": (call) => {
          current = (call.body as { search_defaults: unknown }).search_defaults;
          return json({ ...corpus, search_defaults: current });
        },
        "GET /v1/rag/corpora/corp_1/documents": () => json({ object: "list", data: docs.slice(0, 2), first_id: null, last_id: null, has_more: false }),
      },
    });
    expect(await screen.findByText(/search: server default/)).toBeInTheDocument();
    const patches = () => server.calls.filter((c) => c.method === "PATCH").map((c) => c.body);

    await user.click(screen.getByRole("button", { name: "Search settings" }));
    let dialog = await screen.findByRole("dialog", { name: "Search settings" });
    expect(within(dialog).getByRole("radio", { name: /Server default/ })).toBeChecked();
    await user.click(within(dialog).getByRole("radio", { name: /Words only/ }));
    expect(within(dialog).queryByLabelText("Weight of meaning against words")).toBeNull();
    await user.click(within(dialog).getByRole("button", { name: "Save settings" }));
    expect(await screen.findByText(/search: Words only/)).toBeInTheDocument();
    expect(patches()).toEqual([{ search_defaults: { search: "keyword" } }]);

    await user.click(screen.getByRole("button", { name: "Search settings" }));
    dialog = await screen.findByRole("dialog", { name: "Search settings" });
    expect(within(dialog).getByRole("radio", { name: /Words only/ })).toBeChecked();
    await user.click(within(dialog).getByRole("radio", { name: /Hybrid/ }));
    const weight = within(dialog).getByLabelText("Weight of meaning against words");
    expect(weight).toHaveValue("0.5");
    fireEvent.change(weight, { target: { value: "0.3" } });
    expect(within(dialog).getByText("0.30")).toBeInTheDocument();
    await user.selectOptions(within(dialog).getByLabelText("How much to trust the words of each question"), "language");
    expect(within(dialog).getByText(/unless the closest passages are in another language/)).toBeInTheDocument();
    await user.click(within(dialog).getByRole("button", { name: "Save settings" }));
    expect(await screen.findByText(/search: Hybrid · meaning 0.3 · By language only/)).toBeInTheDocument();
    expect(patches()[1]).toEqual({ search_defaults: { search: "hybrid", fusion: { vector_weight: 0.3, keyword_trust: "language" } } });

    await user.click(screen.getByRole("button", { name: "Search settings" }));
    dialog = await screen.findByRole("dialog", { name: "Search settings" });
    await user.click(within(dialog).getByRole("radio", { name: /Server default/ }));
    await user.click(within(dialog).getByRole("button", { name: "Save settings" }));
    expect(await screen.findByText(/search: server default/)).toBeInTheDocument();
    expect(patches()[2]).toEqual({ search_defaults: null });
  });
});

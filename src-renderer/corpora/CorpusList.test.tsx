import { screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { apiError, json, renderWithApp } from "../test-utils/render.js";
import { CorpusList } from "./CorpusList.js";

const list = (data: unknown[]) => json({ object: "list", data, first_id: null, last_id: null, has_more: false });

describe("CorpusList", () => {
  it("shows a designed empty state that leads to creating a corpus", async () => {
    const user = userEvent.setup();
    renderWithApp(<CorpusList />, { routes: { "GET /v1/rag/corpora": () => list([]), "GET /v1/models": () => json({ object: "list", data: [] }) } });
    expect(await screen.findByRole("heading", { name: "No corpora yet" })).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "New corpus" }));
    expect(await screen.findByRole("dialog", { name: "New corpus" })).toBeInTheDocument();
    expect(screen.getByLabelText("Name")).toHaveFocus();
    expect(screen.getByText(/splits where the topic changes/)).toBeInTheDocument();
  });

  it("shows the API's error in words, in Bahasa Melayu too, with a retry", async () => {
    renderWithApp(<CorpusList />, { locale: "ms", routes: { "GET /v1/rag/corpora": () => apiError(403, "insufficient_scope", "this API key lacks the 'rag.read' scope", "permission_error") } });
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Kunci ini tidak dibenarkan melakukan tindakan itu.");
    expect(alert).toHaveTextContent("lacks the 'rag.read' scope");
    expect(screen.getByRole("button", { name: "Cuba lagi" })).toBeInTheDocument();
  });

  it("lists corpora with status and counts", async () => {
    const corpus = { id: "corp_1", object: "rag.corpus", name: "Laporan banjir", chunking: "semantic", embedding_model: "e5", dimensions: 384, status: "ready", document_counts: { queued: 0, processing: 0, indexed: 3, failed: 1, total: 4 }, chunk_count: 42, retention_days: 30, metadata: {}, created_at: 1, updated_at: 1 };
    renderWithApp(<CorpusList />, { routes: { "GET /v1/rag/corpora": () => list([corpus]) } });
    expect(await screen.findByRole("link", { name: "Laporan banjir" })).toHaveAttribute("href", "#/corpora/corp_1");
    expect(screen.getByText("Ready")).toBeInTheDocument();
    expect(screen.getByText("1 failed")).toBeInTheDocument();
    expect(screen.getByText("3 / 4")).toBeInTheDocument();
  });
});

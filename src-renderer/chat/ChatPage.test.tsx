import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import type { Citation } from "../api/contract.js";
import { json, renderWithApp } from "../test-utils/render.js";
import { ChatPage } from "./ChatPage.js";

const citation: Citation = { index: 1, document_id: "doc_1", chunk_id: "chk_1", filename: "laporan.md", text: "Seramai 1,200 mangsa dipindahkan.", score: 0.8, page: null, page_start: null, page_end: null, heading_path: [], metadata: {}, cited: true, support: { page: null, start: 0, end: 33 } };
const list = (data: unknown[]) => json({ object: "list", data, first_id: null, last_id: null, has_more: false });
const conversation = { id: "conv_1", object: "conversation", title: "Banjir", corpus_id: "corp_1", message_count: 3, created_at: 1, updated_at: 1 };
const message = (id: string, role: string, content: string, extra: object = {}) => ({ id, object: "conversation.message", role, content, citations: null, grounded: null, model: null, stopped: false, created_at: 1, ...extra });

const routes = {
  "GET /v1/conversations": () => list([conversation]),
  "GET /v1/conversations/conv_1": () =>
    json({
      ...conversation,
      messages: [
        message("m1", "user", "Berapa ramai mangsa?"),
        message("m2", "assistant", "Seramai 1,200 orang [1]. Lihat [link](javascript:alert(1)) <b>tebal</b>", { citations: [citation], grounded: true }),
        message("m3", "assistant", "Maaf, korpus tidak menyebut perkara itu.", { citations: [], grounded: false }),
      ],
    }),
  "GET /v1/models": () => json({ object: "list", data: [] }),
  "GET /v1/rag/corpora": () => list([]),
  "GET /v1/rag/corpora/corp_1/chunks/chk_1": () =>
    json({ id: "chk_1", object: "rag.chunk", document_id: "doc_1", filename: "laporan.md", content_type: "text/markdown", index: 3, text: "Seramai 1,200 mangsa dipindahkan.", page_start: null, page_end: null, heading_path: ["Kelantan"], before: "Hujan lebat turun.", after: "Pusat pemindahan dibuka." }),
};

describe("ChatPage", () => {
  it("renders [n] as a citation button that opens the passage, highlighted in its context", async () => {
    const user = userEvent.setup();
    renderWithApp(<ChatPage conversationId="conv_1" />, { routes });
    const chips = await screen.findAllByRole("button", { name: "Source 1: laporan.md" });
    // The inline [1] in the answer text (the list of sources below it has a second one).
    const inline = chips.find((c) => c.classList.contains("cite-chip"))!;
    expect(inline).toHaveTextContent("1");
    await user.click(inline);
    const panel = await screen.findByRole("complementary", { name: /laporan\.md/ });
    expect(await within(panel).findByText("Hujan lebat turun.")).toBeInTheDocument();
    // The passage is marked, and the span that supports the answer (here all of it) stands out inside it.
    const supported = within(panel).getByText("Seramai 1,200 mangsa dipindahkan.");
    expect(supported.tagName).toBe("STRONG");
    expect(supported).toHaveClass("support");
    expect(supported.closest("mark")).not.toBeNull();
    expect(within(panel).getByText("Pusat pemindahan dibuka.")).toBeInTheDocument();
    expect(within(panel).getByRole("heading", { level: 2 })).toHaveFocus();
    await user.keyboard("{Escape}");
    expect(screen.queryByRole("complementary")).not.toBeInTheDocument();
  });

  it("renders model Markdown safely: no javascript: links, no raw HTML", async () => {
    renderWithApp(<ChatPage conversationId="conv_1" />, { routes });
    const answer = (await screen.findByText(/Seramai 1,200 orang/)).closest("article")!;
    expect(within(answer).getAllByRole("button", { name: "Source 1: laporan.md" }).length).toBeGreaterThanOrEqual(1);
    expect(answer.querySelector("a")).toBeNull();
    expect(within(answer).getByText("link")).toBeInTheDocument();
    expect(answer.querySelector("b")).toBeNull();
  });

  it("marks an answer that is not in the corpus differently", async () => {
    renderWithApp(<ChatPage conversationId="conv_1" />, { routes });
    const text = await screen.findByText("Maaf, korpus tidak menyebut perkara itu.");
    const article = text.closest("article")!;
    expect(article).toHaveClass("ungrounded");
    expect(within(article).getByText("Not found in the corpus")).toBeInTheDocument();
    expect(within(article).queryByText("Sources")).not.toBeInTheDocument();
  });
});

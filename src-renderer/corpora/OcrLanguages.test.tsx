import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { adminPrincipal, apiError, json, renderWithApp } from "../test-utils/render.js";
import { CorpusDetail } from "./CorpusDetail.js";
import { CreateCorpusDialog } from "./CreateCorpusDialog.js";

const models = { object: "list", data: [{ id: "e5", object: "model", type: "embedding", root: "multilingual-e5-small", dimensions: 384, created: 1, owned_by: "local" }] };
const status = (over: object = {}) => ({ object: "rag.ocr", available: true, engine: "tesseract", version: "5.3.0", languages: ["ara", "chi_sim", "eng", "msa", "tam"], default_languages: ["eng", "msa"], reason: null, ...over });
const created = (body: unknown) => json({ id: "corp_9", object: "rag.corpus", ...(body as object) }, 201);

describe("OCR languages when creating a corpus", () => {
  it("offers the languages the server reads, English and Bahasa Melayu ticked by default, and sends the choice", async () => {
    const user = userEvent.setup();
    const { server } = renderWithApp(<CreateCorpusDialog open onOpenChange={() => undefined} />, {
      routes: { "GET /v1/models": () => json(models), "GET /v1/rag/ocr": () => json(status()), "POST /v1/rag/corpora": (call) => created(call.body) },
    });
    const dialog = await screen.findByRole("dialog", { name: "New corpus" });
    const group = await within(dialog).findByRole("group", { name: "Languages of scanned pages (OCR)" });
    const boxes = await within(group).findAllByRole("checkbox");
    // The defaults first, then by name; each with its human name and its code.
    expect(boxes.map((b) => b.closest("label")!.textContent)).toEqual(["Englisheng", "Bahasa Melayumsa", "Arabicara", "Chinese (Simplified)chi_sim", "Tamiltam"]);
    expect(within(group).getByRole("checkbox", { name: /English/ })).toBeChecked();
    expect(within(group).getByRole("checkbox", { name: /Bahasa Melayu/ })).toBeChecked();
    expect(within(group).getByRole("checkbox", { name: /Tamil/ })).not.toBeChecked();
    expect(group).toHaveTextContent("Read by Tesseract 5.3.0.");

    await user.type(within(dialog).getByLabelText("Name"), "Notis");
    await user.click(within(group).getByRole("checkbox", { name: /Tamil/ }));
    await user.click(within(group).getByRole("checkbox", { name: /English/ }));
    await user.click(within(dialog).getByRole("button", { name: "Create corpus" }));
    const post = await waitForCall(server.calls, "POST");
    expect(post.body).toMatchObject({ name: "Notis", ocr_languages: ["msa", "tam"] });
  });

  it("keeps at least one language ticked and at most eight", async () => {
    const user = userEvent.setup();
    const many = ["afr", "deu", "eng", "fra", "ita", "msa", "nld", "por", "spa", "swe"];
    renderWithApp(<CreateCorpusDialog open onOpenChange={() => undefined} />, { routes: { "GET /v1/models": () => json(models), "GET /v1/rag/ocr": () => json(status({ languages: many })) } });
    const group = await screen.findByRole("group", { name: "Languages of scanned pages (OCR)" });
    await user.click(await within(group).findByRole("checkbox", { name: /English/ }));
    expect(within(group).getByRole("checkbox", { name: /Bahasa Melayu/ })).toBeDisabled();
    expect(group).toHaveTextContent("At least one language is needed.");
    for (const name of [/English/, /German/, /French/, /Italian/, /Dutch/, /Portuguese/, /Spanish/]) await user.click(within(group).getByRole("checkbox", { name }));
    expect(group).toHaveTextContent("At most 8 languages.");
    expect(within(group).getByRole("checkbox", { name: /Swedish/ })).toBeDisabled();
    expect(within(group).getByRole("checkbox", { name: /Afrikaans/ })).toBeDisabled();
  });

  it("says why scans cannot be read and what to install, and still creates the corpus (with the server's default languages)", async () => {
    const user = userEvent.setup();
    const reason = "No OCR engine is installed: scanned PDFs and images cannot be read (Debian: apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-msa).";
    const { server } = renderWithApp(<CreateCorpusDialog open onOpenChange={() => undefined} />, {
      routes: { "GET /v1/models": () => json(models), "GET /v1/rag/ocr": () => json(status({ available: false, engine: null, version: null, languages: [], reason })), "POST /v1/rag/corpora": (call) => created(call.body) },
    });
    const group = await screen.findByRole("group", { name: "Languages of scanned pages (OCR)" });
    const notice = await within(group).findByRole("status");
    expect(notice).toHaveTextContent("This server cannot read scans and images (no OCR engine)");
    expect(notice).toHaveTextContent(reason);
    expect(notice).toHaveTextContent("scans will be read in English + Bahasa Melayu once OCR is installed");
    expect(within(group).queryAllByRole("checkbox")).toHaveLength(0);
    await user.type(screen.getByLabelText("Name"), "Tanpa OCR");
    await user.click(screen.getByRole("button", { name: "Create corpus" }));
    const post = await waitForCall(server.calls, "POST");
    expect(post.body).toMatchObject({ name: "Tanpa OCR" });
    expect(post.body).not.toHaveProperty("ocr_languages");
  });

  it("does not block creation when the server cannot be asked about OCR", async () => {
    const user = userEvent.setup();
    const { server } = renderWithApp(<CreateCorpusDialog open onOpenChange={() => undefined} />, {
      routes: { "GET /v1/models": () => json(models), "GET /v1/rag/ocr": () => apiError(503, "server_busy", "busy", "service_unavailable_error"), "POST /v1/rag/corpora": (call) => created(call.body) },
    });
    await screen.findByText(/Could not ask the server about OCR \(busy\)/);
    await user.type(screen.getByLabelText("Name"), "Sekarang");
    await user.click(screen.getByRole("button", { name: "Create corpus" }));
    expect((await waitForCall(server.calls, "POST")).body).not.toHaveProperty("ocr_languages");
  });

  it("lets an administrator fetch the built-in engine's language data where Tesseract is missing, then offers the language", async () => {
    const user = userEvent.setup();
    const reason = "No OCR engine can read scans yet: fetch the built-in engine's language data (English and Malay, 5.9 MB; POST /v1/rag/ocr/languages/eng and …/msa), or install Tesseract (Debian: apt-get install tesseract-ocr tesseract-ocr-eng tesseract-ocr-msa).";
    const data = (eng: string) => [
      { language: "eng", name: "English", state: eng, received: eng === "installed" ? 4_113_088 : 0, bytes: 4_113_088 },
      { language: "msa", name: "Malay", state: "missing", received: 0, bytes: 1_747_801 },
    ];
    let current: object = status({ available: false, engine: null, version: null, languages: [], reason, language_data: data("missing") });
    const { server } = renderWithApp(<CreateCorpusDialog open onOpenChange={() => undefined} />, {
      principal: adminPrincipal,
      routes: {
        "GET /v1/models": () => json(models),
        "GET /v1/rag/ocr": () => json(current),
        "POST /v1/rag/ocr/languages/eng": () => {
          current = status({ engine: "tesseract-wasm", version: "tesseract.js 7.0.0", languages: ["eng"], reason: "Fetch the language data for msa to read scans in it (POST /v1/rag/ocr/languages/{language}).", language_data: data("installed") });
          return json(current);
        },
      },
    });
    const group = await screen.findByRole("group", { name: "Languages of scanned pages (OCR)" });
    expect(await within(group).findByText(reason)).toBeInTheDocument();
    const rows = within(group).getAllByRole("listitem");
    expect(rows.map((r) => r.textContent)).toEqual(["Englisheng3.9 MB Fetch", "Bahasa Melayumsa1.7 MB Fetch"]);
    await user.click(within(group).getByRole("button", { name: "Fetch the data for English" }));
    expect(await within(group).findByRole("checkbox", { name: /English/ })).toBeChecked();
    expect(within(group).getByText("ready")).toBeInTheDocument();
    expect(within(group).getByRole("button", { name: "Fetch the data for Bahasa Melayu" })).toBeEnabled();
    expect(group).toHaveTextContent("Read by Tesseract (WebAssembly) tesseract.js 7.0.0.");
    expect(server.calls.filter((c) => c.method === "POST").map((c) => c.path)).toEqual(["/v1/rag/ocr/languages/eng"]);
  });

  it("tells a key without administration that an administrator fetches the language data", async () => {
    renderWithApp(<CreateCorpusDialog open onOpenChange={() => undefined} />, {
      routes: {
        "GET /v1/models": () => json(models),
        "GET /v1/rag/ocr": () => json(status({ available: false, engine: null, version: null, languages: [], reason: "No OCR engine can read scans yet", language_data: [{ language: "eng", name: "English", state: "missing", received: 0, bytes: 4_113_088 }] })),
      },
    });
    expect(await screen.findByText(/an administrator can fetch it here/)).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: /Fetch the data/ })).toBeNull();
  });

  it("names the languages in Malay", async () => {
    renderWithApp(<CreateCorpusDialog open onOpenChange={() => undefined} />, { routes: { "GET /v1/models": () => json(models), "GET /v1/rag/ocr": () => json(status()) }, locale: "ms" });
    const group = await screen.findByRole("group", { name: "Bahasa halaman imbasan (OCR)" });
    expect((await within(group).findAllByRole("checkbox")).map((b) => b.closest("label")!.querySelector(".lang-name")!.textContent)).toEqual(["Bahasa Inggeris", "Bahasa Melayu", "Bahasa Arab", "Bahasa Tamil", "Cina (Ringkas)"]);
  });
});

describe("OCR languages in a corpus's settings", () => {
  const corpus = { id: "corp_1", object: "rag.corpus", name: "Notis", chunking: "semantic", embedding_model: "e5", dimensions: 384, rerank_model: null, search_defaults: null, ocr_languages: ["eng", "msa"], status: "empty", document_counts: { queued: 0, processing: 0, indexed: 0, failed: 0, total: 0 }, chunk_count: 0, retention_days: 30, metadata: {}, created_at: 1, updated_at: 1 };

  it("shows the corpus's languages and changes them for what is indexed from now on", async () => {
    const user = userEvent.setup();
    let current = corpus;
    const { server } = renderWithApp(<CorpusDetail corpusId="corp_1" />, {
      routes: {
        "GET /v1/rag/corpora/corp_1": () => json(current),
        "PATCH /v1/rag/corpora/corp_1": (call) => {
          current = { ...corpus, ...(call.body as object) };
          return json(current);
        },
        "GET /v1/rag/corpora/corp_1/documents": () => json({ object: "list", data: [], first_id: null, last_id: null, has_more: false }),
        "GET /v1/rag/ocr": () => json(status()),
      },
    });
    expect(await screen.findByText(/OCR: English \+ Bahasa Melayu/)).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "OCR languages" }));
    const dialog = await screen.findByRole("dialog", { name: "OCR languages" });
    expect(dialog).toHaveTextContent("Applies to documents indexed from now on.");
    const save = within(dialog).getByRole("button", { name: "Save languages" });
    expect(save).toBeDisabled();
    await user.click(await within(dialog).findByRole("checkbox", { name: /Chinese \(Simplified\)/ }));
    await user.click(save);
    await screen.findByText(/OCR: English \+ Bahasa Melayu \+ Chinese \(Simplified\)/);
    expect(server.calls.filter((c) => c.method === "PATCH").map((c) => c.body)).toEqual([{ ocr_languages: ["eng", "msa", "chi_sim"] }]);
  });
});

async function waitForCall(calls: { method: string; body: unknown }[], method: string) {
  for (let i = 0; i < 100; i++) {
    const call = calls.find((c) => c.method === method);
    if (call) return call;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no ${method} request`);
}

import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { apiError, json, renderWithApp, type Handler } from "../test-utils/render.js";
import { CorpusDetail } from "./CorpusDetail.js";
import { ExportBundleDialog } from "./ExportBundleDialog.js";

const corpus = { id: "corp_1", object: "rag.corpus", name: "Notis banjir dan air", chunking: "semantic", embedding_model: "e5", dimensions: 384, rerank_model: null, search_defaults: null, ocr_languages: [], status: "ready", document_counts: { queued: 0, processing: 0, indexed: 3, failed: 0, total: 3 }, chunk_count: 12, retention_days: 30, metadata: {}, created_at: 1, updated_at: 1 } as const;
const SIGNER = "ed25519:4f1c2a9be07d3356";
const KEY = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p";
const PASSPHRASE = "sungai-kelantan-naik-dua-puluh-enam";

/** A bundle response streamed in pieces; `failAfter`: the stream breaks after that many pieces, as when the server cuts it. */
function bundleResponse(pieces: Uint8Array[], failAfter?: number): Response {
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (failAfter !== undefined && i === failAfter) {
        controller.error(new TypeError("network error"));
        return;
      }
      if (i === pieces.length) controller.close();
      else controller.enqueue(pieces[i++]!);
    },
  });
  return new Response(body, { status: 200, headers: { "content-type": "application/vnd.pustaka.bundle", "content-disposition": 'attachment; filename="notis-banjir-dan-air.pustaka"' } });
}

const pieces = [new Uint8Array(1000).fill(1), new Uint8Array(2000).fill(2), new Uint8Array(48).fill(3)];

const routes = (exportHandler: Handler): Record<string, Handler> => ({
  "POST /v1/rag/corpora/corp_1/export": exportHandler,
  "GET /v1/rag/bundles/recipient": () => json({ object: "rag.bundle_recipient", recipient: KEY, signer: { key_id: SIGNER, public_key: "MCowBQYDK2VwAyEA" } }),
});

/** Chromium's save picker, writing into memory: what was written, whether it was aborted, whether the file was removed. */
function stubPicker(options: { cancel?: boolean } = {}) {
  const file = { written: [] as Uint8Array[], closed: false, aborted: false, removed: false, suggestedName: "" };
  const picker = vi.fn(async (opts: { suggestedName?: string }) => {
    if (options.cancel) throw new DOMException("The user aborted a request.", "AbortError");
    file.suggestedName = opts.suggestedName ?? "";
    return {
      kind: "file",
      name: "salinan.pustaka",
      createWritable: async () =>
        new WritableStream<Uint8Array>({
          write: (chunk) => void file.written.push(chunk),
          close: () => void (file.closed = true),
          abort: () => void (file.aborted = true),
        }),
      remove: async () => void (file.removed = true),
    };
  });
  vi.stubGlobal("showSaveFilePicker", picker);
  return { file, picker };
}

const total = (chunks: Uint8Array[]) => chunks.reduce((n, c) => n + c.byteLength, 0);

function renderDialog(handler: Handler, locale: "en" | "ms" = "en", c: typeof corpus | Record<string, unknown> = corpus) {
  const onOpenChange = vi.fn();
  const view = renderWithApp(<ExportBundleDialog corpus={c as never} open onOpenChange={onOpenChange} />, { routes: routes(handler), locale });
  return { ...view, onOpenChange };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("ExportBundleDialog", () => {
  it("asks for a passphrase twice with its strength, streams the bundle to the picked file, and names the key id to pass on", async () => {
    const user = userEvent.setup();
    const { file, picker } = stubPicker();
    const { server } = renderDialog(() => bundleResponse(pieces));
    const dialog = await screen.findByRole("dialog", { name: "Export “Notis banjir dan air”" });
    expect(within(dialog).getByRole("radio", { name: /A passphrase/ })).toBeChecked();
    expect(within(dialog).getByText(/You choose where to save it/)).toBeInTheDocument();

    const first = within(dialog).getByLabelText("Passphrase");
    await user.type(first, "pendek");
    expect(first).toHaveAccessibleDescription(/Too short: at least 12 characters \(6 so far\)/);
    await user.click(within(dialog).getByRole("button", { name: "Export bundle" }));
    expect(picker).not.toHaveBeenCalled();
    expect(server.calls.filter((c) => c.method === "POST")).toHaveLength(0);

    await user.clear(first);
    await user.type(first, PASSPHRASE);
    expect(first).toHaveAccessibleDescription(/Strong\./);
    const repeat = within(dialog).getByLabelText("Repeat the passphrase");
    await user.type(repeat, `${PASSPHRASE}x`);
    expect(within(dialog).getByText("The two passphrases differ.")).toBeInTheDocument();
    expect(repeat).toHaveAttribute("aria-invalid", "true");
    await user.type(repeat, "{Backspace}");
    expect(within(dialog).queryByText("The two passphrases differ.")).toBeNull();
    await user.click(within(dialog).getByRole("checkbox", { name: "Show the passphrase" }));
    expect(first).toHaveAttribute("type", "text");

    await user.click(within(dialog).getByRole("button", { name: "Export bundle" }));
    expect(await within(dialog).findByText("Bundle saved")).toBeInTheDocument();
    expect(file.suggestedName).toBe("notis-banjir-dan-air.pustaka");
    expect(server.calls.find((c) => c.method === "POST")?.body).toEqual({ passphrase: PASSPHRASE });
    expect(total(file.written)).toBe(3048);
    expect(file.closed).toBe(true);
    expect(within(dialog).getByText("salinan.pustaka, 3.0 KB")).toBeInTheDocument();
    expect(within(dialog).getByText(SIGNER)).toBeInTheDocument();
    expect(within(dialog).getByText(/Tell the recipient this key id/)).toBeInTheDocument();
    expect(within(dialog).getByText(/Send the passphrase by another way/)).toBeInTheDocument();
    expect(within(dialog).getByRole("button", { name: "Done" })).toHaveFocus();
    await user.click(within(dialog).getByRole("button", { name: "Copy key id" }));
    expect(await navigator.clipboard.readText()).toBe(SIGNER);
  });

  it("downloads the bundle once complete where the browser cannot stream to a file", async () => {
    const user = userEvent.setup();
    const created: Blob[] = [];
    vi.stubGlobal("URL", Object.assign(URL, { createObjectURL: (blob: Blob) => (created.push(blob), "blob:bundle"), revokeObjectURL: () => undefined }));
    const clicked: string[] = [];
    const click = vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push(this.download);
    });
    renderDialog(() => bundleResponse(pieces));
    const dialog = await screen.findByRole("dialog");
    expect(within(dialog).getByText("It is downloaded once it is complete.")).toBeInTheDocument();
    await user.type(within(dialog).getByLabelText("Passphrase"), PASSPHRASE);
    await user.type(within(dialog).getByLabelText("Repeat the passphrase"), PASSPHRASE);
    await user.click(within(dialog).getByRole("button", { name: "Export bundle" }));
    expect(await within(dialog).findByText("notis-banjir-dan-air.pustaka, 3.0 KB")).toBeInTheDocument();
    expect(click).toHaveBeenCalledOnce();
    expect(clicked).toEqual(["notis-banjir-dan-air.pustaka"]);
    expect(created[0]!.size).toBe(3048);
    expect(created[0]!.type).toBe("application/vnd.pustaka.bundle");
  });

  it("encrypts for a pasted recipient key, explaining what else people paste by mistake", async () => {
    const user = userEvent.setup();
    stubPicker();
    const { server } = renderDialog(() => bundleResponse(pieces));
    const dialog = await screen.findByRole("dialog");
    await user.click(within(dialog).getByRole("radio", { name: /Another Pustaka's key/ }));
    const field = within(dialog).getByLabelText("Recipient key");
    expect(field).toHaveAccessibleDescription(/Corpora → Import bundle/);
    await user.click(within(dialog).getByRole("button", { name: "Export bundle" }));
    expect(within(dialog).getByText("Paste the receiving Pustaka's key.")).toBeInTheDocument();
    await user.type(field, "AGE-SECRET-KEY-1ABCDEF");
    expect(within(dialog).getByText(/That is a secret key: never share it/)).toBeInTheDocument();
    expect(within(dialog).queryByText(/AGE-SECRET-KEY-1ABCDEF”/)).toBeNull();
    await user.clear(field);
    await user.type(field, SIGNER);
    expect(within(dialog).getByText(/is a signing key id/)).toBeInTheDocument();
    await user.clear(field);
    await user.type(field, KEY.slice(0, 40));
    expect(field).toHaveAttribute("aria-invalid", "true");
    await user.click(within(dialog).getByRole("button", { name: "Export bundle" }));
    expect(server.calls.filter((c) => c.method === "POST")).toHaveLength(0);
    await user.clear(field);
    await user.type(field, KEY);
    expect(field).toHaveAttribute("aria-invalid", "false");
    await user.click(within(dialog).getByRole("button", { name: "Export bundle" }));
    expect(await within(dialog).findByText("Only the Pustaka whose key you entered can open it.")).toBeInTheDocument();
    expect(server.calls.find((c) => c.method === "POST")?.body).toEqual({ recipients: [KEY] });
  });

  it("says in words why the server refused, in Malay too, and leaves no empty file behind", async () => {
    const user = userEvent.setup();
    const { file } = stubPicker();
    renderDialog(() => apiError(409, "corpus_busy", "The corpus is still indexing (2 documents to go)", "conflict_error"), "ms");
    const dialog = await screen.findByRole("dialog", { name: "Eksport “Notis banjir dan air”" });
    await user.type(within(dialog).getByLabelText("Frasa laluan"), PASSPHRASE);
    await user.type(within(dialog).getByLabelText("Ulang frasa laluan"), PASSPHRASE);
    await user.click(within(dialog).getByRole("button", { name: "Eksport berkas" }));
    const alert = await within(dialog).findByRole("alert");
    expect(alert).toHaveTextContent("Korpus ini masih diindeks. Eksport setelah pengindeksan selesai.");
    expect(alert).toHaveTextContent("corpus_busy");
    expect(file.removed).toBe(true);
    // The form is still filled in for another try.
    expect(within(dialog).getByLabelText("Frasa laluan")).toHaveValue(PASSPHRASE);
  });

  it("explains a passphrase the server finds too short", async () => {
    const user = userEvent.setup();
    stubPicker();
    renderDialog(() => apiError(400, "passphrase_too_short", "A bundle's passphrase has at least 12 characters"));
    const dialog = await screen.findByRole("dialog");
    // Twelve characters by the page's count; the server counts otherwise and refuses: its word is shown.
    await user.type(within(dialog).getByLabelText("Passphrase"), "abcdefghijkl");
    await user.type(within(dialog).getByLabelText("Repeat the passphrase"), "abcdefghijkl");
    await user.click(within(dialog).getByRole("button", { name: "Export bundle" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("The passphrase is too short: use at least 12 characters");
  });

  it("reports a bundle cut short as not saved, aborting what was written", async () => {
    const user = userEvent.setup();
    const { file } = stubPicker();
    renderDialog(() => bundleResponse(pieces, 2));
    const dialog = await screen.findByRole("dialog");
    await user.type(within(dialog).getByLabelText("Passphrase"), PASSPHRASE);
    await user.type(within(dialog).getByLabelText("Repeat the passphrase"), PASSPHRASE);
    await user.click(within(dialog).getByRole("button", { name: "Export bundle" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("The export stopped before the bundle was complete, so nothing was saved.");
    expect(file.aborted).toBe(true);
    expect(file.closed).toBe(false);
    expect(file.removed).toBe(true);
  });

  it("shows bytes written while the bundle streams, and stops it on request", async () => {
    const user = userEvent.setup();
    const { file } = stubPicker();
    let push: ((bytes: Uint8Array) => void) | null = null;
    renderDialog(() => {
      const body = new ReadableStream<Uint8Array>({ start: (controller) => void (push = (b) => controller.enqueue(b)) });
      return new Response(body, { status: 200, headers: { "content-disposition": 'attachment; filename="x.pustaka"' } });
    });
    const dialog = await screen.findByRole("dialog");
    await user.type(within(dialog).getByLabelText("Passphrase"), PASSPHRASE);
    await user.type(within(dialog).getByLabelText("Repeat the passphrase"), PASSPHRASE);
    await user.click(within(dialog).getByRole("button", { name: "Export bundle" }));
    expect(await within(dialog).findByRole("status")).toHaveTextContent("Writing the bundle…");
    await waitFor(() => expect(push).not.toBeNull());
    await act(async () => push!(new Uint8Array(5 * 1024 * 1024)));
    const bar = within(dialog).getByRole("progressbar", { name: "Bundle export" });
    await waitFor(() => expect(bar).toHaveAttribute("aria-valuetext", "5.0 MB written"));
    expect(within(dialog).getByText("5.0 MB written")).toBeInTheDocument();
    await user.click(within(dialog).getByRole("button", { name: "Stop export" }));
    await within(dialog).findByLabelText("Passphrase");
    expect(within(dialog).queryByRole("alert")).toBeNull();
    expect(file.aborted).toBe(true);
    expect(file.removed).toBe(true);
  });

  it("does nothing when the person closes the save picker", async () => {
    const user = userEvent.setup();
    stubPicker({ cancel: true });
    const { server } = renderDialog(() => bundleResponse(pieces));
    const dialog = await screen.findByRole("dialog");
    await user.type(within(dialog).getByLabelText("Passphrase"), PASSPHRASE);
    await user.type(within(dialog).getByLabelText("Repeat the passphrase"), PASSPHRASE);
    await user.click(within(dialog).getByRole("button", { name: "Export bundle" }));
    await waitFor(() => expect(within(dialog).getByLabelText("Passphrase")).toBeInTheDocument());
    expect(within(dialog).queryByRole("alert")).toBeNull();
    expect(server.calls.filter((c) => c.method === "POST")).toHaveLength(0);
  });

  it("on the corpus page: an Export button that opens the dialog, disabled with its reason while indexing", async () => {
    const user = userEvent.setup();
    let current: Record<string, unknown> = { ...corpus, status: "indexing", document_counts: { ...corpus.document_counts, queued: 2 } };
    const view = renderWithApp(<CorpusDetail corpusId="corp_1" />, {
      routes: {
        "GET /v1/rag/corpora/corp_1": () => json(current),
        "GET /v1/rag/corpora/corp_1/documents": () => json({ object: "list", data: [], first_id: null, last_id: null, has_more: false }),
      },
    });
    const button = await screen.findByRole("button", { name: "Export bundle" });
    expect(button).toBeDisabled();
    expect(button).toHaveAttribute("title", "Export is possible once indexing has finished.");
    expect(screen.getByText("Export is possible once indexing has finished.")).toBeInTheDocument();
    current = { ...corpus };
    await act(() => view.queryClient.invalidateQueries({ queryKey: ["corpus", "corp_1"] }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Export bundle" })).toBeEnabled());
    expect(screen.queryByText("Export is possible once indexing has finished.")).toBeNull();
    await user.click(screen.getByRole("button", { name: "Export bundle" }));
    const dialog = await screen.findByRole("dialog", { name: "Export “Notis banjir dan air”" });
    await user.keyboard("{Escape}");
    await waitFor(() => expect(dialog).not.toBeInTheDocument());
    await waitFor(() => expect(screen.getByRole("button", { name: "Export bundle" })).toHaveFocus());
  });
});

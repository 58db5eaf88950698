import { act, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { BundleImport } from "../api/contract.js";
import { translate } from "../i18n/i18n.js";
import { apiError, json, renderWithApp, type Handler } from "../test-utils/render.js";
import { CorpusList } from "./CorpusList.js";

const KEY = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p";
const SIGNER = "ed25519:4f1c2a9be07d3356";
const HERE = "ed25519:0a0b0c0d0e0f1011";
const PASSPHRASE = "sungai-kelantan-naik-dua-puluh-enam";

const preview = (over: Partial<BundleImport> = {}): BundleImport => ({
  id: "imp_0123456789abcdef0123456789abcdef",
  object: "rag.bundle_import",
  status: "verified",
  bytes: 3_145_728,
  created_at: 1_790_000_000,
  expires_at: 1_790_086_400,
  signer: { key_id: SIGNER, public_key: "MCowBQYDK2VwAyEA" },
  source: { instance: SIGNER, exported_by: "api_key:key_hq", exported_at: 1_789_990_000, app_version: "0.9.0", corpus_name: "Notis banjir dan air" },
  counts: { documents: 5, passages: 42, original_bytes: 2_097_152 },
  embedding_model: { name: "e5", sha256: "ab".repeat(32), dimensions: 384, local: "e5-tempatan" },
  encrypted_for: "passphrase",
  ...over,
});

const imported = (name: string, over: Record<string, unknown> = {}) => ({ id: "corp_new", object: "rag.corpus", name, chunking: "semantic", embedding_model: "e5-tempatan", dimensions: 384, rerank_model: null, search_defaults: null, ocr_languages: [], status: "ready", document_counts: { queued: 0, processing: 0, indexed: 5, failed: 0, total: 5 }, chunk_count: 42, retention_days: 30, metadata: {}, created_at: 2, updated_at: 2, ...over });

/** An XMLHttpRequest the test drives: upload progress, then the server's answer. */
class FakeXhr {
  static last: FakeXhr | null = null;
  upload: { onprogress: ((e: { loaded: number; total: number; lengthComputable: boolean }) => void) | null; onload: (() => void) | null } = { onprogress: null, onload: null };
  onload: (() => void) | null = null;
  onerror: (() => void) | null = null;
  onabort: (() => void) | null = null;
  status = 0;
  statusText = "";
  responseText = "";
  method = "";
  url = "";
  headers: Record<string, string> = {};
  body: FormData | null = null;
  aborted = false;
  open(method: string, url: string) {
    this.method = method;
    this.url = url;
  }
  setRequestHeader(name: string, value: string) {
    this.headers[name.toLowerCase()] = value;
  }
  getResponseHeader() {
    return null;
  }
  send(body: FormData) {
    this.body = body;
    FakeXhr.last = this;
  }
  abort() {
    this.aborted = true;
    this.onabort?.();
  }
  progress(loaded: number, total: number) {
    this.upload.onprogress?.({ loaded, total, lengthComputable: true });
  }
  respond(status: number, body: unknown) {
    this.upload.onload?.();
    this.status = status;
    this.responseText = JSON.stringify(body);
    this.onload?.();
  }
  fail() {
    this.onerror?.();
  }
}

const list = (data: unknown[]) => json({ object: "list", data, first_id: null, last_id: null, has_more: false });
const existing = imported("Laporan lama", { id: "corp_old" });

function renderList(routes: Record<string, Handler> = {}, locale: "en" | "ms" = "en") {
  return renderWithApp(<CorpusList />, {
    locale,
    routes: {
      "GET /v1/rag/corpora": () => list([existing]),
      "GET /v1/rag/bundles/recipient": () => json({ object: "rag.bundle_recipient", recipient: KEY, signer: { key_id: HERE, public_key: "MCowBQYDK2VwAyEA" } }),
      "GET /v1/models": () => json({ object: "list", data: [{ id: "minilm", object: "model", type: "embedding", dimensions: 384, owned_by: "pustaka", created: 1, root: "minilm" }] }),
      "DELETE /v1/rag/bundles/imports/imp_0123456789abcdef0123456789abcdef": () => json({ id: "imp_0123456789abcdef0123456789abcdef", object: "rag.bundle_import", deleted: true }),
      ...routes,
    },
  });
}

const bundleFile = (bytes = 4096, name = "notis-banjir-dan-air.pustaka") => new File([new Uint8Array(bytes)], name, { type: "application/octet-stream" });

async function openDialog(user: ReturnType<typeof userEvent.setup>, name = "Import bundle") {
  await user.click(await screen.findByRole("button", { name }));
  return screen.findByRole("dialog");
}

/** Chooses the file, types the passphrase and starts the upload; returns the request the page made. */
async function upload(user: ReturnType<typeof userEvent.setup>, dialog: HTMLElement, passphrase: string | null, file = bundleFile()) {
  await user.upload(within(dialog).getByTestId("bundle-file-input"), file);
  if (passphrase) await user.type(within(dialog).getByLabelText("Passphrase"), passphrase);
  await user.click(within(dialog).getByRole("button", { name: "Upload and verify" }));
  await waitFor(() => expect(FakeXhr.last).not.toBeNull());
  return FakeXhr.last!;
}

beforeEach(() => {
  FakeXhr.last = null;
  vi.stubGlobal("XMLHttpRequest", FakeXhr);
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe("ImportBundleDialog", () => {
  it("uploads with progress, shows the verified signer and contents, and imports with the signer confirmed", async () => {
    const user = userEvent.setup();
    const { server } = renderList({ "POST /v1/rag/bundles/imports/imp_0123456789abcdef0123456789abcdef/commit": (call) => json(imported((call.body as { name: string }).name), 201) });
    const dialog = await openDialog(user);
    expect(dialog).toHaveAccessibleName("Import a corpus bundle");
    // This instance's own key, for bundles made for it, with a copy button.
    expect(await within(dialog).findByLabelText("This Pustaka's recipient key")).toHaveTextContent(KEY);
    await user.click(within(dialog).getByRole("button", { name: "Copy key" }));
    expect(await navigator.clipboard.readText()).toBe(KEY);
    expect(within(dialog).getByText(HERE)).toBeInTheDocument();

    // Nothing chosen: said, nothing sent.
    await user.click(within(dialog).getByRole("button", { name: "Upload and verify" }));
    expect(within(dialog).getByRole("alert")).toHaveTextContent("Choose the bundle file first.");
    expect(FakeXhr.last).toBeNull();

    const xhr = await upload(user, dialog, PASSPHRASE);
    expect([xhr.method, xhr.url, xhr.headers["x-pustaka-csrf"]]).toEqual(["POST", "/v1/rag/bundles/imports", "1"]);
    // The passphrase goes before the file: the server reads the bundle as it arrives.
    expect([...xhr.body!.keys()]).toEqual(["passphrase", "file"]);
    expect(xhr.body!.get("passphrase")).toBe(PASSPHRASE);
    expect(within(dialog).getByRole("status")).toHaveTextContent("Uploading notis-banjir-dan-air.pustaka…");
    act(() => xhr.progress(2048, 4096));
    const bar = within(dialog).getByRole("progressbar", { name: "Bundle upload" });
    expect(bar).toHaveAttribute("aria-valuenow", "50");
    expect(bar).toHaveAttribute("aria-valuetext", "2.0 KB of 4.0 KB sent");
    act(() => xhr.progress(4096, 4096));
    expect(within(dialog).getByRole("status")).toHaveTextContent("Verifying the signature and every file…");
    act(() => xhr.respond(201, preview()));

    expect(await within(dialog).findByText("Verified: the signature and every file check out.")).toBeInTheDocument();
    const keyId = within(dialog).getByText(SIGNER);
    expect(keyId).toHaveAccessibleDescription(/Compare this key id with the one the sender gave you/);
    expect(within(dialog).getByText("api_key:key_hq")).toBeInTheDocument();
    expect(within(dialog).getByText("Pustaka 0.9.0")).toBeInTheDocument();
    expect(within(dialog).getByText("42")).toBeInTheDocument();
    expect(within(dialog).getByText("2.0 MB")).toBeInTheDocument();
    expect(within(dialog).getByText("3.0 MB")).toBeInTheDocument();
    expect(within(dialog).getByText("its passphrase")).toBeInTheDocument();
    expect(within(dialog).getByText(/Here as “e5-tempatan”/)).toBeInTheDocument();
    expect(within(dialog).queryByText("Instance")).toBeNull();
    const importButton = within(dialog).getByRole("button", { name: "Import" });
    expect(importButton).toBeDisabled();
    const confirm = within(dialog).getByRole("checkbox", { name: "The key id matches the one the sender gave me" });
    expect(confirm).toHaveFocus();
    await user.click(confirm);
    const name = within(dialog).getByLabelText("Name of the new corpus");
    expect(name).toHaveValue("Notis banjir dan air");
    await user.clear(name);
    await user.type(name, "Salinan pejabat Kota Bharu");
    await user.click(importButton);

    expect(await within(dialog).findByText("Imported as “Salinan pejabat Kota Bharu”")).toBeInTheDocument();
    const commit = server.calls.find((c) => c.path.endsWith("/commit"));
    expect(commit?.body).toEqual({ expected_signer: SIGNER, passphrase: PASSPHRASE, name: "Salinan pejabat Kota Bharu" });
    expect(within(dialog).getByText("5 documents and 42 passages.")).toBeInTheDocument();
    const open = within(dialog).getByRole("link", { name: "Open the corpus" });
    expect(open).toHaveAttribute("href", "#/corpora/corp_new");
    expect(open).toHaveFocus();
    // The list is fetched again to show the new corpus.
    await waitFor(() => expect(server.calls.filter((c) => c.path.startsWith("/v1/rag/corpora?")).length).toBeGreaterThan(1));
    expect(server.calls.some((c) => c.method === "DELETE")).toBe(false);
  });

  it("offers to index the documents again with a local model when the bundle's is not here", async () => {
    const user = userEvent.setup();
    const { server } = renderList({ "POST /v1/rag/bundles/imports/imp_0123456789abcdef0123456789abcdef/commit": () => json(imported("Notis banjir dan air", { embedding_model: "minilm", status: "indexing" }), 201) });
    const dialog = await openDialog(user);
    const xhr = await upload(user, dialog, null);
    expect(xhr.body!.has("passphrase")).toBe(false);
    act(() => xhr.respond(201, preview({ encrypted_for: "recipient", embedding_model: { name: "multilingual-e5-small", sha256: "cd".repeat(32), dimensions: 384, local: null } })));
    expect(await within(dialog).findByText("This Pustaka does not have that model")).toBeInTheDocument();
    expect(within(dialog).getByText(/add the model “multilingual-e5-small” on the Models page/)).toBeInTheDocument();
    expect(within(dialog).getByText("this Pustaka's key")).toBeInTheDocument();
    await user.click(within(dialog).getByRole("checkbox", { name: /The key id matches/ }));
    const importButton = within(dialog).getByRole("button", { name: "Import" });
    expect(importButton).toBeDisabled();
    await user.selectOptions(within(dialog).getByLabelText("Index the documents again with"), "minilm");
    await user.click(importButton);
    expect(await within(dialog).findByText(/being indexed again with minilm/)).toBeInTheDocument();
    expect(server.calls.find((c) => c.path.endsWith("/commit"))?.body).toEqual({ expected_signer: SIGNER, name: "Notis banjir dan air", embedding_model: "minilm" });
  });

  it("warns when the instance a bundle names is not the key that signed it", async () => {
    const user = userEvent.setup();
    renderList();
    const dialog = await openDialog(user);
    const xhr = await upload(user, dialog, PASSPHRASE);
    act(() => xhr.respond(201, preview({ signer: { key_id: "ed25519:ffffffffffffffff", public_key: "MCowBQYDK2VwAyEA" } })));
    expect(await within(dialog).findByText("ed25519:ffffffffffffffff")).toBeInTheDocument();
    expect(within(dialog).getByText("Instance")).toBeInTheDocument();
    expect(within(dialog).getByText(SIGNER)).toBeInTheDocument();
    expect(within(dialog).getByText(/not the key that signed it: the bundle was signed again by someone else/)).toBeInTheDocument();
  });

  it("keeps the preview and says why when the model is refused at import", async () => {
    const user = userEvent.setup();
    renderList({ "POST /v1/rag/bundles/imports/imp_0123456789abcdef0123456789abcdef/commit": () => apiError(400, "embedding_model_missing", "The bundle's passages were embedded with 'e5'") });
    const dialog = await openDialog(user);
    const xhr = await upload(user, dialog, PASSPHRASE);
    act(() => xhr.respond(201, preview()));
    await user.click(await within(dialog).findByRole("checkbox", { name: /The key id matches/ }));
    await user.click(within(dialog).getByRole("button", { name: "Import" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("This Pustaka does not have the model the bundle's passages were embedded with.");
    expect(within(dialog).getByText(SIGNER)).toBeInTheDocument();
  });

  it.each([
    ["bundle_key_mismatch", "the passphrase is wrong, or it was made for another Pustaka's key"],
    ["bundle_tampered", "The bundle was altered after it was made"],
    ["bundle_truncated", "The bundle is incomplete: it was cut short"],
    ["bundle_format_unknown", "This file is not a Pustaka corpus bundle."],
    ["bundle_signature_invalid", "The bundle's signature does not verify"],
    ["bundle_invalid", "The bundle is damaged inside."],
    ["bundle_version_unsupported", "a version of Pustaka that this one cannot read"],
    ["bundle_too_large", "larger than this Pustaka accepts"],
  ])("explains %s, and the chosen file stays for another try", async (code, sentence) => {
    const user = userEvent.setup();
    renderList();
    const dialog = await openDialog(user);
    const xhr = await upload(user, dialog, PASSPHRASE);
    act(() => xhr.respond(code === "bundle_too_large" ? 413 : 400, { error: { message: `server says ${code}`, type: "invalid_request_error", param: "file", code } }));
    const alert = await within(dialog).findByRole("alert");
    expect(alert).toHaveTextContent(sentence);
    expect(alert).toHaveTextContent(`server says ${code}`);
    expect(translate("en", `err.${code}` as never)).toContain(sentence);
    expect(translate("ms", `err.${code}` as never)).not.toBe(translate("en", `err.${code}` as never));
    expect(within(dialog).getByText("notis-banjir-dan-air.pustaka · 4.0 KB")).toBeInTheDocument();
    expect(within(dialog).getByLabelText("Passphrase")).toHaveValue(PASSPHRASE);
  });

  it("says a bundle sent without a passphrase most likely needs one, and puts the focus there", async () => {
    const user = userEvent.setup();
    renderList({}, "ms");
    const dialog = await openDialog(user, "Import berkas");
    await user.upload(within(dialog).getByTestId("bundle-file-input"), bundleFile());
    await user.click(within(dialog).getByRole("button", { name: "Muat naik dan sahkan" }));
    await waitFor(() => expect(FakeXhr.last).not.toBeNull());
    act(() => FakeXhr.last!.respond(400, { error: { message: "cannot be opened", type: "invalid_request_error", param: "file", code: "bundle_key_mismatch" } }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("Berkas ini tidak dibuat untuk kunci Pustaka ini. Jika pengirim memilih frasa laluan, masukkannya dan cuba lagi.");
    const field = within(dialog).getByLabelText("Frasa laluan");
    expect(field).toHaveFocus();
    expect(field).toHaveAttribute("aria-invalid", "true");
  });

  it("goes back to the start when the bundle no longer verifies at import, and says why", async () => {
    const user = userEvent.setup();
    renderList({ "POST /v1/rag/bundles/imports/imp_0123456789abcdef0123456789abcdef/commit": () => apiError(400, "bundle_tampered", "part of it does not decrypt") });
    const dialog = await openDialog(user);
    const xhr = await upload(user, dialog, PASSPHRASE);
    act(() => xhr.respond(201, preview()));
    await user.click(await within(dialog).findByRole("checkbox", { name: /The key id matches/ }));
    await user.click(within(dialog).getByRole("button", { name: "Import" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("The bundle was altered after it was made");
    expect(within(dialog).getByRole("button", { name: "Upload and verify" })).toBeInTheDocument();
  });

  it("explains a signer the server refuses and an upload that expired", async () => {
    const user = userEvent.setup();
    let answer = apiError(400, "bundle_signer_mismatch", `The bundle was signed by ${SIGNER}, not by ed25519:ffff`);
    renderList({ "POST /v1/rag/bundles/imports/imp_0123456789abcdef0123456789abcdef/commit": () => answer });
    const dialog = await openDialog(user);
    const xhr = await upload(user, dialog, PASSPHRASE);
    act(() => xhr.respond(201, preview()));
    await user.click(await within(dialog).findByRole("checkbox", { name: /The key id matches/ }));
    await user.click(within(dialog).getByRole("button", { name: "Import" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("The bundle was signed by another key than the one you confirmed.");
    answer = apiError(404, "import_not_found", "No import", "not_found_error");
    await user.click(within(dialog).getByRole("button", { name: "Import" }));
    expect(await within(dialog).findByText(/This upload is no longer here/)).toBeInTheDocument();
    expect(within(dialog).getByRole("button", { name: "Upload and verify" })).toBeInTheDocument();
  });

  it("discards a verified bundle on request, and when the dialog closes without importing", async () => {
    const user = userEvent.setup();
    const { server } = renderList();
    let dialog = await openDialog(user);
    let xhr = await upload(user, dialog, PASSPHRASE);
    act(() => xhr.respond(201, preview()));
    await user.click(await within(dialog).findByRole("button", { name: "Discard" }));
    await within(dialog).findByRole("button", { name: "Upload and verify" });
    expect(server.calls.filter((c) => c.method === "DELETE")).toHaveLength(1);

    FakeXhr.last = null;
    xhr = await upload(user, dialog, PASSPHRASE);
    act(() => xhr.respond(201, preview()));
    await within(dialog).findByText(SIGNER);
    await user.keyboard("{Escape}");
    await waitFor(() => expect(dialog).not.toBeInTheDocument());
    await waitFor(() => expect(server.calls.filter((c) => c.method === "DELETE")).toHaveLength(2));
    await waitFor(() => expect(screen.getByRole("button", { name: "Import bundle" })).toHaveFocus());

    // Opened again: a fresh start.
    dialog = await openDialog(user);
    expect(within(dialog).getByText("No file chosen")).toBeInTheDocument();
  });

  it("stops an upload on request, keeping the file chosen, and reports an upload that never reached the server", async () => {
    const user = userEvent.setup();
    renderList();
    const dialog = await openDialog(user);
    const xhr = await upload(user, dialog, PASSPHRASE);
    act(() => xhr.progress(1024, 4096));
    await user.click(within(dialog).getByRole("button", { name: "Stop upload" }));
    expect(xhr.aborted).toBe(true);
    expect(within(dialog).getByText("notis-banjir-dan-air.pustaka · 4.0 KB")).toBeInTheDocument();
    expect(within(dialog).queryByRole("alert")).toBeNull();

    FakeXhr.last = null;
    expect(within(dialog).getByLabelText("Passphrase")).toHaveValue(PASSPHRASE);
    await user.click(within(dialog).getByRole("button", { name: "Upload and verify" }));
    await waitFor(() => expect(FakeXhr.last).not.toBeNull());
    act(() => FakeXhr.last!.fail());
    const alert = await within(dialog).findByRole("alert");
    expect(alert).toHaveTextContent("the upload did not reach the server");
    expect(alert).toHaveTextContent("Cannot reach");
  });

  it("is offered from the empty list too", async () => {
    const user = userEvent.setup();
    renderList({ "GET /v1/rag/corpora": () => list([]) });
    await screen.findByRole("heading", { name: "No corpora yet" });
    const dialog = await openDialog(user);
    expect(dialog).toHaveAccessibleName("Import a corpus bundle");
    expect(within(dialog).getByRole("button", { name: /Bundle file/ })).toHaveFocus();
  });
});

/**
 * Corpus bundles (issue 35): a corpus exported as one signed, encrypted file, and a bundle
 * received in two steps (upload and verify, then import once the person compared the signer).
 */
import { ApiError } from "./api-error.js";
import type { ApiClient } from "./client.js";
import type { BundleImport, BundleRecipient, Corpus } from "./contract.js";

/** What an export is encrypted for: a passphrase, or the age keys (`age1…`) of receiving instances. */
export type BundleEncryption = { passphrase: string } | { recipients: string[] };

/** `POST /v1/rag/bundles/imports/{id}/commit`. */
export interface CommitImportRequest {
  /** Again, for a bundle opened with a passphrase: the server keeps none. */
  passphrase?: string;
  /** The signer's key id the person compared: a bundle signed by another key is refused. */
  expected_signer?: string;
  name?: string;
  /** A local embedding model to index the documents with again, when the bundle's is not here. */
  embedding_model?: string;
}

/** What the server streams back for an export: the bundle's bytes and the name it suggests. */
export interface BundleDownload {
  body: ReadableStream<Uint8Array>;
  filename: string | null;
}

/**
 * Starts an export. Resolves once the server has accepted it (refusals such as `corpus_busy`
 * or `passphrase_too_short` reject here), with the bundle still streaming in `body`.
 */
export async function startExport(c: ApiClient, corpusId: string, encryption: BundleEncryption, signal?: AbortSignal): Promise<BundleDownload> {
  const res = await c.request("POST", `/v1/rag/corpora/${encodeURIComponent(corpusId)}/export`, { json: encryption, signal, headers: { accept: "application/vnd.pustaka.bundle, application/json" } });
  if (!res.body) throw new ApiError({ status: res.status, message: "the server sent an empty bundle", code: "empty_stream" });
  return { body: res.body, filename: filenameOf(res.headers.get("content-disposition")) };
}

/** The file name in `Content-Disposition: attachment; filename="…"`, or null. */
export function filenameOf(disposition: string | null): string | null {
  const match = disposition ? /filename="([^"]+)"/.exec(disposition) : null;
  return match?.[1] ?? null;
}

/** This instance's age recipient (what senders encrypt a bundle for) and its signing key id. */
export const getRecipient = (c: ApiClient, signal?: AbortSignal) => c.json<BundleRecipient>("GET", "/v1/rag/bundles/recipient", { signal });

export const getImport = (c: ApiClient, id: string, signal?: AbortSignal) => c.json<BundleImport>("GET", `/v1/rag/bundles/imports/${encodeURIComponent(id)}`, { signal });

export const commitImport = (c: ApiClient, id: string, body: CommitImportRequest) => c.json<Corpus>("POST", `/v1/rag/bundles/imports/${encodeURIComponent(id)}/commit`, { json: body });

export const discardImport = (c: ApiClient, id: string) => c.json<{ id: string; deleted: boolean }>("DELETE", `/v1/rag/bundles/imports/${encodeURIComponent(id)}`);

/**
 * Uploads a bundle to be verified, reporting the bytes sent. XMLHttpRequest, not fetch:
 * fetch reports no upload progress, and a streamed fetch body needs HTTP/2, which the local
 * server does not speak. The passphrase goes first: the server reads the bundle as it arrives.
 * `onSent(loaded, total)`; once `loaded === total` the server is verifying.
 */
export function uploadBundle(c: ApiClient, file: Blob & { name?: string }, passphrase: string | null, onSent: (loaded: number, total: number) => void, signal?: AbortSignal): Promise<BundleImport> {
  const form = new FormData();
  if (passphrase) form.append("passphrase", passphrase);
  form.append("file", file, file.name ?? "bundle.pustaka");
  return new Promise<BundleImport>((resolve, reject) => {
    if (signal?.aborted) {
      reject(new DOMException("aborted", "AbortError"));
      return;
    }
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `${c.origin}/v1/rag/bundles/imports`);
    for (const [name, value] of Object.entries({ ...c.authHeaders(), accept: "application/json" })) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => onSent(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.upload.onload = () => onSent(file.size, file.size);
    const onAbort = () => xhr.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    const settle = () => signal?.removeEventListener("abort", onAbort);
    xhr.onload = () => {
      settle();
      const response = new Response(xhr.responseText, { status: xhr.status, statusText: xhr.statusText, headers: retryAfterOf(xhr) });
      if (xhr.status >= 200 && xhr.status < 300) {
        response.json().then((body) => resolve(body as BundleImport), (error: unknown) => reject(ApiError.network(error)));
      } else {
        void ApiError.fromResponse(response).then(reject);
      }
    };
    xhr.onerror = () => {
      settle();
      reject(ApiError.network(new Error("the upload did not reach the server")));
    };
    xhr.onabort = () => {
      settle();
      reject(new DOMException("aborted", "AbortError"));
    };
    xhr.send(form);
  });
}

function retryAfterOf(xhr: XMLHttpRequest): Record<string, string> {
  const value = xhr.getResponseHeader("retry-after");
  return value ? { "retry-after": value } : {};
}

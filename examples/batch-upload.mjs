#!/usr/bin/env node
// Batch upload with a service account: gets an OAuth access token (client credentials),
// uploads every PDF, DOCX, TXT, MD and HTML file of a folder into a corpus in batches,
// renews the token when it expires, and waits until the corpus is indexed.
//
//   PUSTAKA_URL=http://127.0.0.1:7780 PUSTAKA_CLIENT_ID=sa_… PUSTAKA_CLIENT_SECRET=pss-… \
//     node examples/batch-upload.mjs ./reports corp_…
//
// Node 20+, no dependencies. Prints one JSON line per batch and a summary.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

const [folder, corpusId] = process.argv.slice(2);
const { PUSTAKA_URL: base = "http://127.0.0.1:7780", PUSTAKA_CLIENT_ID: clientId, PUSTAKA_CLIENT_SECRET: clientSecret } = process.env;
const BATCH = Number(process.env.PUSTAKA_BATCH ?? 20);
if (!folder || !corpusId || !clientId || !clientSecret) {
  console.error("usage: PUSTAKA_CLIENT_ID=… PUSTAKA_CLIENT_SECRET=… node examples/batch-upload.mjs FOLDER CORPUS_ID");
  process.exit(2);
}

let token = null;
let expiresAt = 0;
async function accessToken() {
  if (token && Date.now() < expiresAt - 30_000) return token;
  const res = await fetch(`${base}/v1/oauth/token`, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", scope: "rag.read rag.write" }),
  });
  const body = await res.json();
  if (!res.ok) throw new Error(`token request refused: ${body.error}: ${body.error_description}`);
  token = body.access_token;
  expiresAt = Date.now() + body.expires_in * 1000;
  return token;
}

async function call(method, route, init = {}) {
  for (;;) {
    const res = await fetch(`${base}${route}`, { ...init, method, headers: { ...init.headers, authorization: `Bearer ${await accessToken()}` } });
    // Over the rate limit: wait as told, then try again.
    if (res.status === 429) {
      await new Promise((r) => setTimeout(r, Number(res.headers.get("retry-after") ?? 1) * 1000));
      continue;
    }
    if (res.status === 401) token = null;
    return { status: res.status, body: await res.json() };
  }
}

// Every format Pustaka reads (the server types each file by its content and refuses the rest, saying why).
const wanted = /\.(pdf|docx|odt|pptx|xlsx|ods|csv|tsv|epub|html?|xhtml|md|markdown|mdown|mkd|txt|text|eml|mbox|mbx|msg|png|jpe?g|tiff?|doc|xls|ppt)$/i;
const files = (await readdir(folder, { withFileTypes: true })).filter((e) => e.isFile() && wanted.test(e.name)).map((e) => path.join(folder, e.name));
let accepted = 0;
let refused = 0;
for (let i = 0; i < files.length; i += BATCH) {
  const form = new FormData();
  for (const file of files.slice(i, i + BATCH)) form.append("file", new Blob([await readFile(file)]), path.basename(file));
  const { status, body } = await call("POST", `/v1/rag/corpora/${encodeURIComponent(corpusId)}/documents`, { body: form });
  accepted += body.documents?.length ?? 0;
  refused += body.rejected?.length ?? 0;
  console.log(JSON.stringify({ batch: i / BATCH + 1, status, accepted: body.documents?.length ?? 0, rejected: body.rejected ?? [] }));
  if (status >= 500 || status === 401 || status === 403 || status === 404) process.exit(1);
}
for (;;) {
  const { body } = await call("GET", `/v1/rag/corpora/${encodeURIComponent(corpusId)}`);
  if (body.status !== "indexing") {
    console.log(JSON.stringify({ done: true, files: files.length, accepted, refused, corpus_status: body.status, document_counts: body.document_counts }));
    break;
  }
  await new Promise((r) => setTimeout(r, 1000));
}

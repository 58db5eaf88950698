/**
 * `pustaka corpora …`: corpus bundles from the command line, as a client of a running server
 * (the same API the workbench uses, so the server does the work, checks the key and audits):
 *
 *   pustaka corpora list
 *   pustaka corpora recipient                       what a sender encrypts a bundle for
 *   pustaka corpora export <corpus> -o <file>       --passphrase-file F | --recipient age1…
 *   pustaka corpora import <file>                   --expect-signer ed25519:… | --yes
 *
 * The passphrase comes from a file (`--passphrase-file`), PUSTAKA_BUNDLE_PASSPHRASE, or a prompt
 * on a terminal; it is never an argument (arguments are visible to every user of the machine).
 * An import shows who signed the bundle and what it holds, and writes nothing until the signer
 * is confirmed: by `--expect-signer` (compared by the server), by `--yes`, or at the prompt.
 */
import { createWriteStream, openAsBlob } from "node:fs";
import { readFile, rename, rm, stat } from "node:fs/promises";
import { createInterface } from "node:readline/promises";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { pipeline } from "node:stream/promises";
import type { Command } from "commander";
import { ConfigError, clientEnvironment } from "./config.js";

interface ClientFlags {
  url?: string;
  key?: string;
}

interface Client {
  url: string;
  key: string;
}

function clientOf(flags: ClientFlags): Client {
  const env = clientEnvironment();
  const url = (flags.url ?? env.url ?? "http://127.0.0.1:7780").replace(/\/+$/, "");
  const key = flags.key ?? env.apiKey;
  if (!key) throw new ConfigError("this command talks to a running server: give an API key with --key or PUSTAKA_API_KEY");
  if (!/^https?:\/\/[^/]+$/.test(url)) throw new ConfigError(`--url must be the server's address, such as http://127.0.0.1:7780 (got '${url}')`);
  return { url, key };
}

async function call(client: Client, method: string, route: string, init: { json?: unknown; body?: FormData } = {}): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(`${client.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${client.key}`, ...(init.json !== undefined ? { "content-type": "application/json" } : {}) },
      body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
    });
  } catch (error) {
    throw new ConfigError(`no Pustaka server answers at ${client.url} (${(error as Error).message}): start it with \`pustaka serve\`, or give --url`);
  }
  return res;
}

/** The server's error, as one line a person can act on. */
async function failure(res: Response): Promise<ConfigError> {
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = (await res.json()) as { error?: { message?: string; code?: string } };
    if (body.error?.message) message = `${body.error.message}${body.error.code ? ` (${body.error.code})` : ""}`;
  } catch {
    // Not JSON: the status says what there is.
  }
  return new ConfigError(message);
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw await failure(res);
  return (await res.json()) as T;
}

/** The passphrase from a file, the environment, or a prompt (on a terminal, not echoed). */
async function passphrase(file: string | undefined, purpose: string): Promise<string | undefined> {
  if (file) {
    const text = (await readFile(file, "utf8")).replace(/\r?\n$/, "");
    if (!text) throw new ConfigError(`the passphrase file ${file} is empty`);
    return text;
  }
  const fromEnvironment = clientEnvironment().bundlePassphrase;
  if (fromEnvironment) return fromEnvironment;
  if (!process.stdin.isTTY) return undefined;
  return prompt(`Passphrase ${purpose}: `, true);
}

async function prompt(question: string, secret = false): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  if (secret) {
    // Echo nothing of what is typed.
    (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
      if (s.includes(question)) process.stderr.write(question);
    };
  }
  try {
    return await rl.question(question);
  } finally {
    rl.close();
    if (secret) process.stderr.write("\n");
  }
}

const collect = (value: string, previous: string[]) => [...previous, value];
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const date = (seconds: number) => new Date(seconds * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");

interface Corpus {
  id: string;
  name: string;
  status: string;
  embedding_model: string;
  chunk_count: number;
  document_counts: { total: number };
}

interface Preview {
  id: string;
  signer: { key_id: string };
  source: { instance: string; exported_by: string; exported_at: number; app_version: string; corpus_name: string };
  counts: { documents: number; passages: number; original_bytes: number };
  embedding_model: { name: string; sha256: string | null; dimensions: number; local: string | null };
  encrypted_for: string;
  bytes: number;
}

/** A corpus named by id, or by its exact name when only one has it. */
async function findCorpus(client: Client, which: string): Promise<Corpus> {
  if (/^corp_/.test(which)) {
    const res = await call(client, "GET", `/v1/rag/corpora/${encodeURIComponent(which)}`);
    return json<Corpus>(res);
  }
  const all: Corpus[] = [];
  for (let after: string | null = null; ; ) {
    const page: { data: Corpus[]; has_more: boolean; last_id: string | null } = await json(await call(client, "GET", `/v1/rag/corpora?limit=100${after ? `&after=${after}` : ""}`));
    all.push(...page.data);
    if (!page.has_more || !page.last_id) break;
    after = page.last_id;
  }
  const named = all.filter((c) => c.name === which);
  if (named.length === 1) return named[0]!;
  if (named.length > 1) throw new ConfigError(`${named.length} corpora are named '${which}': give the id (${named.map((c) => c.id).join(", ")})`);
  throw new ConfigError(`no corpus '${which}' (pustaka corpora list shows them)`);
}

export function registerCorporaCommands(program: Command): void {
  const corpora = program.command("corpora").description("corpora of a running server: list them, export one as a signed, encrypted bundle, import a bundle");
  const withClient = (command: Command) => command.option("--url <url>", "the running server (default: PUSTAKA_URL, else http://127.0.0.1:7780)").option("--key <key>", "an API key (default: PUSTAKA_API_KEY)");

  withClient(corpora.command("list").description("the corpora of the key's workspace")).action(async (flags: ClientFlags) => {
    const client = clientOf(flags);
    const page = await json<{ data: Corpus[] }>(await call(client, "GET", "/v1/rag/corpora?limit=100&order=asc"));
    for (const c of page.data) process.stdout.write(`${c.id}  ${c.name}  (${c.document_counts.total} documents, ${c.chunk_count} passages, ${c.embedding_model}, ${c.status})\n`);
    if (page.data.length === 0) process.stdout.write("no corpora\n");
  });

  withClient(corpora.command("recipient").description("this instance's age recipient (give it to whoever sends you a bundle) and its signing key")).action(async (flags: ClientFlags) => {
    const r = await json<{ recipient: string; signer: { key_id: string } }>(await call(clientOf(flags), "GET", "/v1/rag/bundles/recipient"));
    process.stdout.write(`recipient: ${r.recipient}\nsigner:    ${r.signer.key_id}\n`);
  });

  withClient(
    corpora
      .command("export <corpus>")
      .description("write a corpus (id or name) as one bundle: originals, passages, vectors, settings and provenance, signed by this instance and encrypted")
      .requiredOption("-o, --output <file>", "the bundle to write (.pustaka)")
      .option("--passphrase-file <file>", "encrypt with the passphrase in this file (else PUSTAKA_BUNDLE_PASSPHRASE, else asked)")
      .option("--recipient <age1…>", "encrypt for this instance's key instead (`pustaka corpora recipient` on the receiving side); repeatable", collect, []),
  ).action(async (which: string, flags: ClientFlags & { output: string; passphraseFile?: string; recipient: string[] }) => {
    const client = clientOf(flags);
    const corpus = await findCorpus(client, which);
    let body: { passphrase: string } | { recipients: string[] };
    if (flags.recipient.length > 0) {
      if (flags.passphraseFile) throw new ConfigError("give --passphrase-file or --recipient, not both");
      body = { recipients: flags.recipient };
    } else {
      const secret = await passphrase(flags.passphraseFile, "to encrypt the bundle with");
      if (!secret) throw new ConfigError("the bundle needs a passphrase (--passphrase-file, PUSTAKA_BUNDLE_PASSPHRASE) or --recipient");
      body = { passphrase: secret };
    }
    const res = await call(client, "POST", `/v1/rag/corpora/${corpus.id}/export`, { json: body });
    if (!res.ok || !res.body) throw await failure(res);
    // Written beside the target and renamed once complete: a failed export leaves no file that looks whole.
    const partial = `${flags.output}.partial`;
    try {
      await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), createWriteStream(partial, { mode: 0o600 }));
      await rename(partial, flags.output);
    } catch (error) {
      await rm(partial, { force: true });
      throw new ConfigError(`the export of '${corpus.name}' failed before it was complete: ${(error as Error).message}`);
    }
    const signer = await json<{ signer: { key_id: string } }>(await call(client, "GET", "/v1/rag/bundles/recipient"));
    process.stdout.write(`exported '${corpus.name}' (${corpus.document_counts.total} documents, ${corpus.chunk_count} passages) to ${flags.output}: ${mb((await stat(flags.output)).size)}\n`);
    process.stdout.write(`signed by ${signer.signer.key_id}: tell the recipient this key id, to compare when they import it\n`);
  });

  withClient(
    corpora
      .command("import <file>")
      .description("import a bundle as a new corpus: it is verified first (signature, every hash), and written only once its signer is confirmed")
      .option("--passphrase-file <file>", "the bundle's passphrase (else PUSTAKA_BUNDLE_PASSPHRASE, else asked; none for a bundle made for this instance)")
      .option("--expect-signer <key id>", "the sender's signing key id (ed25519:…): any other signer is refused")
      .option("--name <name>", "the new corpus's name (default: the bundle's)")
      .option("--embedding-model <model>", "index the documents again with this local model when the bundle's model is not here")
      .option("-y, --yes", "import whoever signed it (without --expect-signer or a prompt)"),
  ).action(async (file: string, flags: ClientFlags & { passphraseFile?: string; expectSigner?: string; name?: string; embeddingModel?: string; yes?: boolean }) => {
    const client = clientOf(flags);
    const secret = await passphrase(flags.passphraseFile, "of the bundle (Enter if it was made for this instance)");
    const form = new FormData();
    if (secret) form.append("passphrase", secret);
    form.append("file", await openAsBlob(file), "bundle.pustaka");
    const preview = await json<Preview>(await call(client, "POST", "/v1/rag/bundles/imports", { body: form }));
    const out = process.stderr;
    out.write(`bundle verified: '${preview.source.corpus_name}', ${preview.counts.documents} documents, ${preview.counts.passages} passages, ${mb(preview.counts.original_bytes)} of originals\n`);
    out.write(`  signed by   ${preview.signer.key_id}\n`);
    out.write(`  exported    ${date(preview.source.exported_at)} by ${preview.source.exported_by} (Pustaka ${preview.source.app_version})\n`);
    out.write(`  model       ${preview.embedding_model.name} (${preview.embedding_model.dimensions} dimensions)${preview.embedding_model.local ? `: here as '${preview.embedding_model.local}'` : ": NOT here"}\n`);
    const discard = async () => void (await call(client, "DELETE", `/v1/rag/bundles/imports/${preview.id}`));
    if (!flags.expectSigner && !flags.yes) {
      if (!process.stdin.isTTY) {
        await discard();
        throw new ConfigError("not imported: confirm the signer with --expect-signer <key id> (or --yes)");
      }
      const answer = (await prompt(`Compare ${preview.signer.key_id} with the key id the sender gave you. Import? [y/N] `)).trim().toLowerCase();
      if (answer !== "y" && answer !== "yes") {
        await discard();
        throw new ConfigError("not imported");
      }
    }
    const res = await call(client, "POST", `/v1/rag/bundles/imports/${preview.id}/commit`, {
      json: { ...(secret ? { passphrase: secret } : {}), ...(flags.expectSigner ? { expected_signer: flags.expectSigner } : {}), ...(flags.name ? { name: flags.name } : {}), ...(flags.embeddingModel ? { embedding_model: flags.embeddingModel } : {}) },
    });
    if (!res.ok) {
      const error = await failure(res);
      await discard().catch(() => undefined);
      throw error;
    }
    const corpus = (await res.json()) as Corpus;
    process.stdout.write(`imported as ${corpus.id} '${corpus.name}' (${corpus.document_counts.total} documents, ${corpus.chunk_count} passages, ${corpus.embedding_model}, ${corpus.status})\n`);
  });
}

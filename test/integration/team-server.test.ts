/**
 * A team server as docs/team-server.md deploys it: three `pustaka serve --database …`
 * processes on one Postgres, HAProxy in front checking /readyz. What one replica does, the
 * others see: corpora (and their in-memory indexes, kept in step by the change feed),
 * progress events, keys, sign-in links, OAuth tokens, rate limits (exact across replicas)
 * and one audit trail. Then the faults: a replica killed with SIGKILL mid-indexing, mid-stream
 * and mid-burst; Postgres restarted under load; a replica drained with SIGTERM.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startCluster, type Cluster, type Replica } from "../helpers/cluster.js";
import { testModel } from "../helpers/models.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 60_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last instanceof Error ? ` (last error: ${last.message})` : ""}`);
    await sleep(everyMs);
  }
}

function upload(c: Cluster, corpusId: string, files: { name: string; text: string }[], base = c.url) {
  const form = new FormData();
  for (const f of files) form.append("file", new Blob([f.text], { type: "text/plain" }), f.name);
  return fetch(`${base}/v1/rag/corpora/${corpusId}/documents`, { method: "POST", headers: { authorization: `Bearer ${c.key}` }, body: form });
}

const fact = (i: number, topic: string) => ({ name: `${topic}-${i}.txt`, text: `Nota ${topic} ${i}. Kuala Lumpur ialah ibu negara Malaysia; fakta ${i} tentang ${topic} dan ${"durian ".repeat((i % 5) + 1)}di Pulau Pinang.` });

async function indexed(c: Cluster, corpusId: string, total: number): Promise<void> {
  await until(`${total} documents indexed`, async () => {
    const got = await c.call("GET", `/v1/rag/corpora/${corpusId}`);
    return got.json?.document_counts?.indexed === total;
  }, 180_000);
}

/** The distinct documents a replica's search returns (its own in-memory index). */
async function documentsFound(c: Cluster, replica: Replica, corpusId: string): Promise<Set<string>> {
  const res = await c.call("POST", `/v1/rag/corpora/${corpusId}/search`, { query: "ibu negara Malaysia durian", top_k: 50, search: "vector" }, { base: replica.url });
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return new Set((res.json.data as { document_id: string }[]).map((d) => d.document_id));
}

describe("a team server: three replicas on Postgres behind HAProxy", { timeout: 900_000 }, () => {
  let c: Cluster;
  before(async () => {
    c = await startCluster({
      bindings: { chat: testModel("gemma3-270m"), embed: testModel("all-minilm-l6-v2") },
      config: {
        rateLimits: { defaultTier: "open", tiers: { open: { requestsPerMinute: 0, tokensPerMinute: 0 }, tight: { requestsPerMinute: 60, tokensPerMinute: 0 } } },
        shutdown: { readyzGraceSeconds: 2, drainSeconds: 30 },
        // Tokens name the balancer as their issuer, whichever replica signs them (as the guide sets it).
        oauth: { issuer: "http://pustaka.team.test" },
        chat: { contextSize: 1024, sequences: 2 },
      },
    });
  });
  after(async () => {
    await c?.close();
  });

  it("shares corpora: a document indexed by any replica is searchable on every replica, and a deletion reaches them all", async () => {
    const corpus = await c.call("POST", "/v1/rag/corpora", { name: "shared", embedding_model: "embed" });
    assert.equal(corpus.status, 201);
    const id = corpus.json.id as string;
    assert.equal((await upload(c, id, [0, 1, 2].map((i) => fact(i, "awal")))).status, 202);
    await indexed(c, id, 3);
    // Every replica opens the corpus's index now (from the store), before the next documents exist.
    for (const r of c.replicas) assert.equal((await documentsFound(c, r, id)).size, 3);
    assert.equal((await upload(c, id, [3, 4, 5, 6, 7, 8].map((i) => fact(i, "baru")))).status, 202);
    await indexed(c, id, 9);
    // Indexed by whichever replica took each job; the others learn it from the change feed.
    const indexers = new Set(c.postgres.psql(c.databaseUrl, "SELECT DISTINCT origin FROM corpus_changes WHERE change = 'indexed'").trim().split("\n"));
    assert.ok(indexers.size >= 2, `work spread over replicas: ${[...indexers].join(", ")}`);
    for (const r of c.replicas) await until(`replica ${r.id} to search all 9`, async () => (await documentsFound(c, r, id)).size === 9, 15_000);
    // A deletion on one replica leaves the others' indexes too.
    const docs = await c.call("GET", `/v1/rag/corpora/${id}/documents?limit=100`);
    const gone = (docs.json.data as { id: string }[])[0]!.id;
    assert.equal((await c.call("DELETE", `/v1/rag/corpora/${id}/documents/${gone}`, undefined, { base: c.replicas[1]!.url })).status, 200);
    for (const r of c.replicas) await until(`replica ${r.id} to forget the deleted document`, async () => !(await documentsFound(c, r, id)).has(gone), 15_000);
    // Its original is read back by any replica (the shared store holds it, sealed).
    const other = (docs.json.data as { id: string }[])[1]!.id;
    for (const r of c.replicas) {
      const original = await fetch(`${r.url}/v1/rag/corpora/${id}/documents/${other}/content`, { headers: { authorization: `Bearer ${c.key}` } });
      assert.equal(original.status, 200, `${r.id} serves the original`);
      assert.match(await original.text(), /Kuala Lumpur/);
    }
  });

  it("streams progress to a client on any replica, whichever replica indexes", async () => {
    const corpus = await c.call("POST", "/v1/rag/corpora", { name: "progress", embedding_model: "embed" });
    const id = corpus.json.id as string;
    const watcher = c.replicas[2]!;
    const controller = new AbortController();
    const events = await fetch(`${watcher.url}/v1/rag/corpora/${id}/events`, { headers: { authorization: `Bearer ${c.key}` }, signal: controller.signal });
    assert.equal(events.status, 200);
    const seen = new Set<string>();
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        for await (const chunk of events.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          for (const match of buffer.matchAll(/"document_id":"(doc_[A-Za-z0-9]+)","status":"indexed"/g)) seen.add(match[1]!);
        }
      } catch {
        // aborted
      }
    })();
    const up = await upload(c, id, [0, 1, 2, 3].map((i) => fact(i, "kemajuan")), c.replicas[0]!.url);
    const uploaded = ((await up.json()) as { documents: { id: string }[] }).documents.map((d) => d.id);
    await indexed(c, id, 4);
    await until("the watcher to see every document indexed", async () => uploaded.every((d) => seen.has(d)), 15_000);
    controller.abort();
    await reading;
  });

  it("shares keys, sign-in links and OAuth tokens across replicas", async () => {
    const [r1, r2, r3] = c.replicas as [Replica, Replica, Replica];
    const created = await c.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "analyst", scopes: ["inference", "rag.read"] }, { base: r1.url });
    assert.equal(created.status, 201);
    for (const r of [r2, r3]) assert.equal((await c.call("GET", "/v1/models", undefined, { base: r.url, key: created.json.secret })).status, 200, `the key works at ${r.id}`);
    const revoked = await c.call("DELETE", `/v1/admin/workspaces/ws_default/api_keys/${created.json.id}`, undefined, { base: r2.url });
    assert.equal(revoked.status, 200);
    assert.equal((await c.call("GET", "/v1/models", undefined, { base: r3.url, key: created.json.secret })).status, 401, "revoked at r2, refused at r3");
    // The sign-in link r1 printed signs a browser in at r3.
    const token = /#signin=(psi-[A-Za-z0-9]+)/.exec(r1.output())?.[1];
    assert.ok(token, "r1 printed a sign-in link");
    const session = await fetch(`${r3.url}/v1/session`, { method: "POST", headers: { "content-type": "application/json", "x-pustaka-csrf": "1", origin: r3.url }, body: JSON.stringify({ token }) });
    assert.equal(session.status, 201);
    // A service account made at r1 gets a token from r2, which r3 accepts.
    const account = await c.call("POST", "/v1/admin/workspaces/ws_default/service_accounts", { name: "pipeline", scopes: ["inference"] }, { base: r1.url });
    assert.equal(account.status, 201);
    const grant = await fetch(`${r2.url}/v1/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: account.json.client_id, client_secret: account.json.client_secret }),
    });
    assert.equal(grant.status, 200);
    const { access_token } = (await grant.json()) as { access_token: string };
    assert.equal((await c.call("GET", "/v1/models", undefined, { base: r3.url, key: access_token })).status, 200);
  });

  it("serves a remote model added at one replica from every replica, and stops when another removes it", async () => {
    const [r1, r2, r3] = c.replicas as [Replica, Replica, Replica];
    const ids = async (r: Replica) => ((await c.call("GET", "/v1/models", undefined, { base: r.url })).json.data as { id: string }[]).map((m) => m.id);
    // The upstream is another Pustaka (r3's own chat model), reached with the admin key, sealed in the store.
    const added = await c.call("POST", "/v1/admin/remote-models", { id: "team-chat", type: "chat", upstreams: [{ url: `${r3.url}/v1`, model: "chat", api_key: c.key }] }, { base: r1.url });
    assert.equal(added.status, 201, JSON.stringify(added.json));
    await until("r2 to serve team-chat", async () => (await ids(r2)).includes("team-chat"), 10_000);
    const answer = await c.call("POST", "/v1/chat/completions", { model: "team-chat", max_tokens: 4, messages: [{ role: "user", content: "Hi" }] }, { base: r2.url });
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    assert.equal((await c.call("DELETE", "/v1/admin/remote-models/team-chat", undefined, { base: r2.url })).status, 200);
    for (const r of [r1, r3]) await until(`${r.id} to stop serving team-chat`, async () => !(await ids(r)).includes("team-chat"), 10_000);
  });

  it("admits exactly the limit across replicas: 200 parallel requests against 60 a minute", async () => {
    const created = await c.call("POST", "/v1/admin/workspaces/ws_default/api_keys", { name: "tight", scopes: ["inference"] });
    assert.equal((await c.call("PATCH", `/v1/admin/workspaces/ws_default/api_keys/${created.json.id}`, { rate_limit_tier: "tight" })).status, 200);
    const results = await Promise.all(Array.from({ length: 200 }, () => c.call("POST", "/v1/embeddings", { model: "embed", input: "ibu negara" }, { key: created.json.secret })));
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 60, JSON.stringify(statuses.reduce<Record<number, number>>((a, s) => ({ ...a, [s]: (a[s] ?? 0) + 1 }), {})));
    assert.equal(statuses.filter((s) => s === 429).length, 140);
    const replicas = new Set(results.map((r) => r.headers.get("x-pustaka-replica")));
    assert.equal(replicas.size, 3, "the balancer spread them over every replica");
    const verified = await c.call("GET", "/v1/audit/verify");
    assert.equal(verified.json.valid, true);
  });

  it("indexes every document exactly once when a replica is killed mid-upload", async () => {
    const corpus = await c.call("POST", "/v1/rag/corpora", { name: "crash", embedding_model: "embed" });
    const id = corpus.json.id as string;
    assert.equal((await upload(c, id, Array.from({ length: 50 }, (_, i) => fact(i, "ranap")))).status, 202);
    // Kill a replica while it holds a document (claimed, not yet committed).
    const victimId = await until("a replica to be indexing", async () => c.postgres.psql(c.databaseUrl, `SELECT claimed_by FROM documents WHERE corpus_id = '${id}' AND status = 'processing' LIMIT 1`).trim() || undefined, 60_000, 20);
    const victim = c.replicas.find((r) => r.id === victimId)!;
    await victim.kill("SIGKILL");
    await indexed(c, id, 50);
    const perDocument = c.postgres.psql(c.databaseUrl, `SELECT d.chunk_count, (SELECT COUNT(*) FROM chunks k WHERE k.document_id = d.id) FROM documents d WHERE d.corpus_id = '${id}'`).trim().split("\n");
    assert.equal(perDocument.length, 50);
    for (const row of perDocument) {
      const [declared, stored] = row.split("|").map(Number);
      assert.ok(declared! > 0 && declared === stored, `chunks stored once per document: ${row}`);
    }
    const commits = Number(c.postgres.psql(c.databaseUrl, `SELECT COUNT(*) FROM corpus_changes WHERE corpus_id = '${id}' AND change = 'indexed'`).trim());
    assert.equal(commits, 50, "each document committed once");
    await victim.start();
    await c.haproxy.waitFor("UP");
  });

  it("ends a stream cut by a replica's death with an error, and the retry on another replica succeeds", async () => {
    const res = await fetch(`${c.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${c.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chat", stream: true, max_tokens: 400, messages: [{ role: "user", content: "Tell a long story about Malaysia." }] }),
    });
    assert.equal(res.status, 200);
    const serving = c.replicas.find((r) => r.id === res.headers.get("x-pustaka-replica"))!;
    const reader = res.body!.getReader();
    let text = "";
    const decoder = new TextDecoder();
    text += decoder.decode((await reader.read()).value);
    await serving.kill("SIGKILL");
    let failed = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
    } catch {
      failed = true;
    }
    assert.ok(failed || !text.includes("[DONE]"), "the client sees the stream end without [DONE]: an error, not a silent success");
    const retry = await c.call("POST", "/v1/chat/completions", { model: "chat", max_tokens: 8, messages: [{ role: "user", content: "Hello" }] });
    assert.equal(retry.status, 200);
    assert.notEqual(retry.headers.get("x-pustaka-replica"), serving.id);
    await serving.start();
    await c.haproxy.waitFor("UP");
  });

  it("keeps the audit chain whole when a replica is killed during a burst of audited requests", async () => {
    const before = Number(c.postgres.psql(c.databaseUrl, "SELECT COUNT(*) FROM audit_events").trim());
    const burst = Promise.all(Array.from({ length: 150 }, (_, i) => c.call("POST", "/v1/embeddings", { model: "embed", input: `entri ${i}` }).catch(() => null)));
    await sleep(300);
    const victim = c.replicas[0]!;
    await victim.kill("SIGKILL");
    const results = await burst;
    assert.ok(results.filter((r) => r?.status === 200).length > 0);
    const verified = await c.call("GET", "/v1/audit/verify");
    assert.equal(verified.json.valid, true, JSON.stringify(verified.json.problems));
    const afterCount = Number(c.postgres.psql(c.databaseUrl, "SELECT COUNT(*) FROM audit_events").trim());
    assert.ok(afterCount > before, "the burst was audited");
    // Every replica alive sees the same gapless chain.
    const heads = c.postgres.psql(c.databaseUrl, "SELECT chain, COUNT(*), MAX(seq) FROM audit_events GROUP BY chain").trim().split("\n");
    for (const row of heads) {
      const [, count, max] = row.split("|");
      assert.equal(count, max, `chain ${row} has no gap`);
    }
    await victim.start();
    await c.haproxy.waitFor("UP");
  });

  it("answers 503 while Postgres restarts under load and recovers by itself, with no process exiting", async () => {
    const statuses: number[] = [];
    let stop = false;
    const load = (async () => {
      while (!stop) {
        const r = await c.call("POST", "/v1/embeddings", { model: "embed", input: "beban" }).catch(() => null);
        statuses.push(r?.status ?? 0);
        await sleep(20);
      }
    })();
    await sleep(1000);
    await c.postgres.stop();
    await sleep(3000);
    await c.postgres.start();
    await until("requests to succeed again", async () => (await c.call("POST", "/v1/embeddings", { model: "embed", input: "pulih" })).status === 200, 60_000, 500);
    stop = true;
    await load;
    assert.ok(statuses.includes(200));
    assert.ok(statuses.some((s) => s === 503), `some requests were refused while Postgres was down: ${[...new Set(statuses)].join(",")}`);
    assert.deepEqual([...new Set(statuses)].filter((s) => s !== 200 && s !== 503), [], "nothing but 200 and 503 (no 500, no dropped connection)");
    for (const r of c.replicas) assert.ok(r.running, `${r.id} still running; its last words:\n${r.output().slice(-4000)}`);
    await c.haproxy.waitFor("UP");
  });

  it("drains on SIGTERM: /readyz turns 503, the stream in flight finishes, the process exits 0", async () => {
    const r = c.replicas[1]!;
    const res = await fetch(`${r.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${c.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "chat", stream: true, max_tokens: 60, messages: [{ role: "user", content: "Count slowly." }] }),
    });
    assert.equal(res.status, 200);
    const body = res.text();
    const exited = r.kill("SIGTERM");
    const ready = await until("/readyz to report draining", async () => {
      const got = await fetch(`${r.url}/readyz`).catch(() => null);
      return got?.status === 503 ? ((await got.json()) as { status: string }).status : undefined;
    }, 5_000, 50);
    assert.equal(ready, "draining");
    await c.haproxy.waitFor("DOWN", [r.id], 10_000);
    assert.match(await body, /\[DONE\]/, "the stream finished");
    assert.equal(await exited, 0);
    await r.start();
    await c.haproxy.waitFor("UP");
  });
});

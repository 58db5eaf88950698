/**
 * Remote models when upstreams fail. Real faults on real llama-server replicas (killed with
 * SIGKILL mid-stream, frozen with SIGSTOP so they hang, down for a whole test), and, for
 * answers no healthy llama-server gives (HTTP 500, an HTML error page, truncated JSON, a
 * stream cut short, headers that come too late), a deliberately broken server on loopback.
 * What must hold: the contract's errors (502 upstream_error, 503 upstream_unavailable with
 * Retry-After, 504 upstream_timeout), a clean error event when a stream breaks, retries on a
 * healthy replica while nothing has reached the client, no crash, no hang, honest audit.
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { freePort, startLlamaServer, type LlamaServer } from "../helpers/llama-server.js";
import { testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

/**
 * An OpenAI-compatible server that misbehaves as told by the model name it is asked for:
 * `status-500`, `html` (a proxy's error page), `truncated` (JSON cut short), `cut-stream`
 * (a stream that stops without finishing), `slow-headers` (answers after 5 s).
 */
async function startBrokenUpstream(): Promise<{ url: string; close(): Promise<void>; hits: Map<string, number> }> {
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      if (req.method === "GET") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ object: "list", data: [{ id: "status-500", object: "model", owned_by: "broken" }] }));
        return;
      }
      const model = (JSON.parse(body || "{}") as { model?: string }).model ?? "";
      hits.set(model, (hits.get(model) ?? 0) + 1);
      switch (model) {
        case "status-500":
          res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "CUDA error: out of memory", type: "server_error" } }));
          return;
        case "html":
          res.writeHead(502, { "content-type": "text/html" }).end("<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>");
          return;
        case "truncated":
          res.writeHead(200, { "content-type": "application/json" }).end('{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2,');
          return;
        case "cut-stream":
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: "assistant", content: "Once upon" } }] })}\n\n`);
          setTimeout(() => res.destroy(), 100);
          return;
        case "slow-headers":
          setTimeout(() => res.writeHead(500).end(), 5000);
          return;
        default:
          res.writeHead(404).end();
      }
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readStream(response: Response): Promise<{ events: any[]; done: boolean }> {
  const text = await response.text();
  const data = text
    .split("\n\n")
    .map((block) => block.split("\n").find((line) => line.startsWith("data: "))?.slice(6))
    .filter((d): d is string => d !== undefined);
  return { events: data.filter((d) => d !== "[DONE]").map((d) => JSON.parse(d)), done: data.includes("[DONE]") };
}

describe("remote models when upstreams fail", () => {
  let a: LlamaServer;
  let b: LlamaServer;
  let broken: Awaited<ReturnType<typeof startBrokenUpstream>>;
  let t: TestServer;
  let closedPort: number;
  const post = (route: string, body: unknown, signal?: AbortSignal) =>
    fetch(`${t.url}${route}`, { method: "POST", headers: { authorization: `Bearer ${t.key}`, "content-type": "application/json" }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
  const chat = (model: string, extra: Record<string, unknown> = {}) => post("/v1/chat/completions", { model, messages: [{ role: "user", content: "Tell me a story." }], max_tokens: 8, ...extra });
  const upstreams = async (model: string) => (await t.call("GET", `/v1/models/${model}`)).json.backing.upstreams as any[];

  before(async () => {
    [a, b, broken, closedPort] = await Promise.all([
      startLlamaServer({ model: testModel("smollm2-135m-instruct"), alias: "smol", parallel: 2 }),
      startLlamaServer({ model: testModel("smollm2-135m-instruct"), alias: "smol", parallel: 2 }),
      startBrokenUpstream(),
      freePort(),
    ]);
    const gone = `http://127.0.0.1:${closedPort}/v1`;
    t = await startTestServer({
      bindings: {},
      rendererDir: null,
      config: {
        models: {
          remote: {
            pair: { upstreams: [{ url: a.url, model: "smol" }, { url: b.url, model: "smol" }] },
            "solo-a": { upstreams: [{ url: a.url, model: "smol" }] },
            "status-500": { upstreams: [{ url: broken.url, model: "status-500" }] },
            html: { upstreams: [{ url: broken.url, model: "html" }] },
            truncated: { type: "embedding", upstreams: [{ url: broken.url, model: "truncated" }] },
            "cut-stream": { upstreams: [{ url: broken.url, model: "cut-stream" }] },
            "slow-headers": { upstreams: [{ url: broken.url, model: "slow-headers" }] },
            "broken-then-good": { upstreams: [{ url: broken.url, model: "status-500" }, { url: b.url, model: "smol" }] },
            gone: { upstreams: [{ url: gone, model: "smol" }] },
          },
        },
        upstreams: { connectTimeoutSeconds: 1, firstByteTimeoutSeconds: 3, idleTimeoutSeconds: 3, healthIntervalSeconds: 1, queueTimeoutSeconds: 5 },
      },
    });
  });
  after(async () => {
    await t?.close();
    await Promise.all([a?.stop(), b?.stop(), broken?.close()]);
  });

  it("one of two replicas down for the whole test: every request still succeeds", async () => {
    await b.kill();
    try {
      for (let i = 0; i < 8; i++) {
        const res = await chat("pair");
        assert.equal(res.status, 200, `request ${i}: ${await res.clone().text()}`);
      }
      const states = await upstreams("pair");
      assert.equal(states[0].health, "healthy");
      assert.notEqual(states[1].health, "healthy", "the dead replica is kept out");
      assert.match(states[1].last_error, /ECONNREFUSED|could not be reached|closed the connection/);
    } finally {
      await b.restart();
    }
    // Back in rotation once its health check passes.
    for (let i = 0; i < 40 && (await upstreams("pair"))[1].health !== "healthy"; i++) await new Promise((r) => setTimeout(r, 250));
    assert.equal((await upstreams("pair"))[1].health, "healthy");
  });

  it("a replica killed mid-stream: the client gets a clean error event, and the next request goes to the healthy one", async () => {
    const res = await chat("pair", { max_tokens: 2000, stream: true, messages: [{ role: "user", content: "Write a very long story about a river." }] });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    await reader.read();
    const serving = (await upstreams("pair")).find((u) => u.in_flight > 0);
    assert.ok(serving, "one replica is serving the stream");
    const victim = serving.id === "r1" ? a : b;
    await victim.kill();
    let text = "";
    const decoder = new TextDecoder();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    const last = text.trim().split("\n\n").at(-1)!;
    assert.match(last, /^data: \{"error"/, text.slice(-500));
    const error = JSON.parse(last.slice(6)).error;
    assert.equal(error.code, "upstream_error");
    assert.doesNotMatch(error.message, /127\.0\.0\.1/, "the upstream's address stays private");
    assert.ok(!text.includes("[DONE]"), "a broken stream does not claim to be done");
    const next = await chat("pair");
    assert.equal(next.status, 200, await next.clone().text());
    await victim.restart();
  });

  it("an upstream that hangs: 504 upstream_timeout, streamed or not, and no hang", async () => {
    a.freeze();
    try {
      const started = Date.now();
      const res = await chat("solo-a");
      assert.equal(res.status, 504);
      assert.equal(((await res.json()) as any).error.code, "upstream_timeout");
      assert.ok(Date.now() - started < 10_000, `answered in ${Date.now() - started} ms`);
      // Streamed: the failure comes before the first byte, so it is an HTTP error too.
      const streamed = await chat("solo-a", { stream: true });
      assert.ok([503, 504].includes(streamed.status), `status ${streamed.status}`);
    } finally {
      a.thaw();
    }
  });

  it("an upstream answering 500, an HTML page, truncated JSON, a cut stream or late headers: the contract's errors", async () => {
    const five = await chat("status-500");
    assert.equal(five.status, 502);
    const fiveBody = (await five.json()) as any;
    assert.equal(fiveBody.error.code, "upstream_error");
    assert.match(fiveBody.error.message, /CUDA error: out of memory/);

    const html = await chat("html");
    assert.equal(html.status, 502);
    const htmlBody = (await html.json()) as any;
    assert.equal(htmlBody.error.code, "upstream_error");
    assert.doesNotMatch(htmlBody.error.message, /<|>/, "no markup in the message");
    assert.match(htmlBody.error.message, /502 Bad Gateway/);

    const truncated = await post("/v1/embeddings", { model: "truncated", input: ["a"] });
    assert.equal(truncated.status, 502);
    assert.match(((await truncated.json()) as any).error.message, /not JSON/);

    const cut = await chat("cut-stream", { stream: true });
    assert.equal(cut.status, 200);
    const { events, done } = await readStream(cut);
    assert.equal(done, false);
    assert.equal(events.at(-1).error.code, "upstream_error");
    assert.ok(events.some((e) => e.choices?.[0]?.delta?.content === "Once upon"), "what arrived before the cut was delivered");

    const slow = await chat("slow-headers");
    assert.equal(slow.status, 504);
    assert.equal(((await slow.json()) as any).error.code, "upstream_timeout");
  });

  it("retries a failed replica's request on a healthy one while nothing has reached the client, and audits both", async () => {
    const before = broken.hits.get("status-500") ?? 0;
    const res = await chat("broken-then-good", { stream: true });
    assert.equal(res.status, 200);
    const { events, done } = await readStream(res);
    assert.ok(done, JSON.stringify(events.at(-1)));
    assert.ok(events.some((e) => (e.choices?.[0]?.delta?.content ?? "").length > 0));
    // The broken replica was tried first at least once over a few requests (least loaded, round robin).
    for (let i = 0; i < 3; i++) assert.equal((await chat("broken-then-good")).status, 200);
    assert.ok((broken.hits.get("status-500") ?? 0) > before, "the broken replica was tried");
    const audit = (await t.call("GET", "/v1/audit/events?type=chat.completion&limit=20")).json.data as any[];
    assert.ok(audit.some((e) => JSON.stringify(e.data.upstreams) === JSON.stringify(["broken-then-good@r1", "broken-then-good@r2"]) && e.outcome === "success"), "an entry names both replicas it went to");
  });

  it("no replica reachable: 503 upstream_unavailable with Retry-After", async () => {
    const res = await chat("gone");
    assert.equal(res.status, 503);
    assert.ok(Number(res.headers.get("retry-after")) >= 1);
    const body = (await res.json()) as any;
    assert.equal(body.error.code, "upstream_unavailable");
    assert.doesNotMatch(body.error.message, new RegExp(String(closedPort)));
  });

  it("is still serving after all of it", async () => {
    assert.equal((await fetch(`${t.url}/healthz`)).status, 200);
    for (let i = 0; i < 40 && (await upstreams("pair")).some((u) => u.health !== "healthy"); i++) await new Promise((r) => setTimeout(r, 250));
    const res = await chat("pair");
    assert.equal(res.status, 200);
  });
});

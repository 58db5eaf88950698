import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { UpstreamTarget } from "../../models/remote-binding.js";
import { errorOf, UpstreamClient, UpstreamFailure, type FailureKind, type UpstreamTimeouts } from "./upstream-client.js";

const TIMEOUTS: UpstreamTimeouts = { connectMs: 500, firstByteMs: 300, idleMs: 300 };

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A fake upstream: each test mounts its own route; every request is recorded. */
const routes = new Map<string, Handler>();
const seen: Seen[] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
    const handler = routes.get(req.url ?? "");
    if (handler) handler(req, res, body);
    else res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${req.url}`, type: "not_found_error" } }));
  });
});
let port = 0;
const clients: UpstreamClient[] = [];

function client(overrides: Partial<UpstreamTarget> = {}): UpstreamClient {
  const made = new UpstreamClient({ id: "r1", baseUrl: `http://127.0.0.1:${port}/v1`, model: "svc-chat", apiKey: null, tls: null, ...overrides }, TIMEOUTS);
  clients.push(made);
  return made;
}

/** The request the fake upstream saw at `url` (the last one). */
function seenAt(url: string): Seen {
  const request = seen.findLast((s) => s.url === url);
  assert.ok(request, `no request to ${url}`);
  return request;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

function eventStream(res: ServerResponse): ServerResponse {
  return res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
}

const signal = (): AbortSignal => new AbortController().signal;

/** A rejection check: an UpstreamFailure of `kind` whose message matches `message`. */
function failure(kind: FailureKind, message?: RegExp, check?: (error: UpstreamFailure) => void) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof UpstreamFailure, `not an UpstreamFailure: ${String(error)}`);
    assert.equal(error.kind, kind, error.message);
    if (message) assert.match(error.message, message);
    check?.(error);
    return true;
  };
}

async function collect(events: AsyncGenerator<unknown, void, undefined>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const event of events) out.push(event);
  return out;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("UpstreamClient.postJson", () => {
  it("posts JSON under the base URL and reads the JSON answer, without a key when there is none", async () => {
    routes.set("/v1/embeddings", (_req, res, body) => json(res, 200, { object: "list", echo: JSON.parse(body) }));
    const answer = await client().postJson("/embeddings", { model: "svc-embed", input: ["satu", "dua"] }, signal());
    assert.deepEqual(answer, { object: "list", echo: { model: "svc-embed", input: ["satu", "dua"] } });
    const request = seenAt("/v1/embeddings");
    assert.equal(request.method, "POST");
    assert.equal(request.headers["content-type"], "application/json");
    assert.equal(request.headers.authorization, undefined);
  });

  it("sends the API key as a bearer token when the target has one, read at each request", async () => {
    routes.set("/v1/keyed", (_req, res) => json(res, 200, { ok: true }));
    let key: string | undefined = "sk-upstream-1";
    const keyed = client({ apiKey: () => key });
    await keyed.postJson("/keyed", {}, signal());
    assert.equal(seenAt("/v1/keyed").headers.authorization, "Bearer sk-upstream-1");
    key = "sk-upstream-2";
    await keyed.postJson("/keyed", {}, signal());
    assert.equal(seenAt("/v1/keyed").headers.authorization, "Bearer sk-upstream-2");
    key = undefined;
    await keyed.postJson("/keyed", {}, signal());
    assert.equal(seenAt("/v1/keyed").headers.authorization, undefined, "an unset key sends no header");
  });

  it("posts to the server's root (without /v1) when asked, and GETs JSON", async () => {
    routes.set("/tokenize", (_req, res) => json(res, 200, { tokens: [1, 2, 3] }));
    routes.set("/v1/models", (_req, res) => json(res, 200, { data: [{ id: "svc-chat", owned_by: "llamacpp" }] }));
    const c = client();
    assert.equal(c.root, `http://127.0.0.1:${port}`);
    assert.deepEqual(await c.postJson("/tokenize", { content: "hai" }, signal(), { root: true }), { tokens: [1, 2, 3] });
    assert.deepEqual(await c.getJson("/models", signal()), { data: [{ id: "svc-chat", owned_by: "llamacpp" }] });
    const get = seenAt("/v1/models");
    assert.equal(get.method, "GET");
    assert.equal(get.headers["content-type"], undefined, "a GET has no body");
  });

  it("reads a 400 with an OpenAI error body as the client's fault, with the upstream's code", async () => {
    routes.set("/v1/bad", (_req, res) => json(res, 400, { error: { message: "'temperature' must be at most 2", type: "invalid_request_error", code: "invalid_value", param: "temperature" } }));
    await assert.rejects(
      client().postJson("/bad", {}, signal()),
      failure("status", /answered HTTP 400: 'temperature' must be at most 2$/, (error) => {
        assert.equal(error.options.status, 400);
        assert.equal(error.options.clientFault, true);
        assert.equal(error.options.upstreamCode, "invalid_value");
        assert.equal(error.retryable, false);
        // The message may reach clients: it names the replica and the path, never the address.
        assert.match(error.message, /^upstream r1 \(\/bad\)/);
        assert.doesNotMatch(error.message, /127\.0\.0\.1/);
      }),
    );
  });

  it("reads 401 as the upstream's refusal of Pustaka (not the client's fault, retryable)", async () => {
    routes.set("/v1/unauthorised", (_req, res) => json(res, 401, { error: { message: "invalid api key", type: "authentication_error" } }));
    await assert.rejects(
      client().postJson("/unauthorised", {}, signal()),
      failure("status", /HTTP 401: invalid api key/, (error) => {
        assert.equal(error.options.status, 401);
        assert.equal(error.options.clientFault, false);
        assert.equal(error.retryable, true);
        assert.equal(error.options.upstreamCode, "authentication_error");
      }),
    );
  });

  it("carries a 429's Retry-After, rounded up to whole seconds", async () => {
    routes.set("/v1/busy", (_req, res) => json(res, 429, { error: { message: "too many requests" } }, { "retry-after": "7" }));
    routes.set("/v1/busy-fraction", (_req, res) => json(res, 429, { error: "slow down" }, { "retry-after": "2.5" }));
    routes.set("/v1/busy-date", (_req, res) => json(res, 503, { error: "loading" }, { "retry-after": "Wed, 21 Oct 2037 07:28:00 GMT" }));
    const c = client();
    await assert.rejects(
      c.postJson("/busy", {}, signal()),
      failure("status", /HTTP 429/, (error) => {
        assert.equal(error.options.retryAfterSeconds, 7);
        assert.equal(error.options.clientFault, false);
      }),
    );
    await assert.rejects(
      c.postJson("/busy-fraction", {}, signal()),
      failure("status", /HTTP 429: slow down/, (error) => assert.equal(error.options.retryAfterSeconds, 3)),
    );
    await assert.rejects(
      c.postJson("/busy-date", {}, signal()),
      failure("status", /HTTP 503: loading/, (error) => assert.equal(error.options.retryAfterSeconds, undefined)),
    );
  });

  it("reads a 200 that is not JSON (a proxy's HTML page) as a protocol failure", async () => {
    routes.set("/v1/html", (_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html><body><h1>Welcome to nginx!</h1></body></html>"));
    await assert.rejects(
      client().postJson("/html", {}, signal()),
      failure("protocol", /not JSON .*Welcome to nginx!/, (error) => assert.doesNotMatch(error.message, /<h1>/)),
    );
  });

  it("cannot connect to a closed port", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await assert.rejects(client({ baseUrl: `http://127.0.0.1:${closedPort}/v1` }).postJson("/models", {}, signal()), failure("connect", /could not be reached: ECONNREFUSED/, (error) => assert.equal(error.retryable, true)));
  });

  it("passes the caller's abort through untouched, not as an UpstreamFailure", async () => {
    routes.set("/v1/hang", () => undefined);
    const controller = new AbortController();
    const pending = client().postJson("/hang", {}, controller.signal);
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(pending, (error: unknown) => {
      assert.ok(!(error instanceof UpstreamFailure), `wrapped: ${String(error)}`);
      assert.equal((error as Error).name, "AbortError");
      return true;
    });
    await assert.rejects(
      client().postJson("/hang", {}, AbortSignal.abort()),
      (error: unknown) => !(error instanceof UpstreamFailure) && (error as Error).name === "AbortError",
    );
  });
});

describe("UpstreamClient.openStream", () => {
  it("yields the parsed events until [DONE], however the bytes are cut", async () => {
    routes.set("/v1/chat/completions", (_req, res, body) => {
      const request = JSON.parse(body) as { stream?: boolean };
      assert.equal(request.stream, true);
      eventStream(res);
      res.write(": keep-alive\n\n");
      res.write('data: {"choices":[{"index":0,"delta":{"content":"Sel');
      setTimeout(() => {
        res.write('amat"}}]}\n\ndata: {"choices":[{"index":0,"delta":{"content":" pagi"},"finish_reason":"stop"}]}\n\n');
        res.write("data: [DONE]\n\n");
        res.end('data: {"after":"done"}\n\n');
      }, 20);
    });
    const stream = await client().openStream("/chat/completions", { model: "svc-chat", stream: true }, signal());
    assert.deepEqual(await collect(stream.events), [
      { choices: [{ index: 0, delta: { content: "Selamat" } }] },
      { choices: [{ index: 0, delta: { content: " pagi" }, finish_reason: "stop" }] },
    ]);
    assert.match(seenAt("/v1/chat/completions").headers.accept ?? "", /text\/event-stream/);
  });

  it("fails a stream that ends without [DONE]", async () => {
    routes.set("/v1/cut", (_req, res) => eventStream(res).end('data: {"choices":[{"index":0,"delta":{"content":"Sel"}}]}\n\n'));
    const stream = await client().openStream("/cut", {}, signal());
    const got: unknown[] = [];
    await assert.rejects(
      (async () => {
        for await (const event of stream.events) got.push(event);
      })(),
      failure("protocol", /ended its stream before it finished \(no \[DONE\]\)/),
    );
    assert.equal(got.length, 1, "what came before the cut was yielded");
  });

  it("fails on an error object sent mid-stream", async () => {
    routes.set("/v1/mid-error", (_req, res) =>
      eventStream(res).end('data: {"choices":[{"index":0,"delta":{"content":"Sel"}}]}\n\ndata: {"error":{"message":"slot unavailable","type":"server_error"}}\n\ndata: [DONE]\n\n'),
    );
    const stream = await client().openStream("/mid-error", {}, signal());
    const got: unknown[] = [];
    await assert.rejects(
      (async () => {
        for await (const event of stream.events) got.push(event);
      })(),
      failure("status", /failed mid-stream: slot unavailable/, (error) => {
        assert.equal(error.options.status, 500);
        assert.equal(error.retryable, true);
      }),
    );
    assert.equal(got.length, 1);
  });

  it("fails on an error event and on an event that is not JSON", async () => {
    routes.set("/v1/error-event", (_req, res) => eventStream(res).end("event: error\ndata: upstream exploded\n\n"));
    routes.set("/v1/garbled", (_req, res) => eventStream(res).end("data: {not json\n\n"));
    const c = client();
    await assert.rejects(collect((await c.openStream("/error-event", {}, signal())).events), failure("status", /reported an error mid-stream: upstream exploded/));
    await assert.rejects(collect((await c.openStream("/garbled", {}, signal())).events), failure("protocol", /event that is not JSON: \{not json/));
  });

  it("refuses a 200 that is not an event stream before any event", async () => {
    routes.set("/v1/not-streamed", (_req, res) => json(res, 200, { choices: [{ message: { content: "Selamat pagi" } }] }));
    await assert.rejects(client().openStream("/not-streamed", {}, signal()), failure("protocol", /answered application\/json instead of an event stream: .*Selamat pagi/));
  });

  it("rejects at open when the upstream answers an error status", async () => {
    routes.set("/v1/overloaded", (_req, res) => json(res, 503, { error: { message: "no slot available" } }, { "retry-after": "4" }));
    await assert.rejects(
      client().openStream("/overloaded", {}, signal()),
      failure("status", /HTTP 503: no slot available/, (error) => assert.equal(error.options.retryAfterSeconds, 4)),
    );
  });

  it("passes the caller's abort mid-stream through untouched", async () => {
    routes.set("/v1/endless", (_req, res) => {
      eventStream(res);
      const timer = setInterval(() => res.write('data: {"choices":[{"index":0,"delta":{"content":"."}}]}\n\n'), 20);
      res.on("close", () => clearInterval(timer));
    });
    const controller = new AbortController();
    const stream = await client().openStream("/endless", {}, controller.signal);
    let count = 0;
    await assert.rejects(
      (async () => {
        for await (const _event of stream.events) if (++count === 2) controller.abort();
      })(),
      (error: unknown) => {
        assert.ok(!(error instanceof UpstreamFailure), `wrapped: ${String(error)}`);
        assert.equal((error as Error).name, "AbortError");
        return true;
      },
    );
    assert.ok(count >= 2);
  });

  it("closes the upstream's response when the consumer stops reading", async () => {
    let closed = false;
    routes.set("/v1/left", (_req, res) => {
      eventStream(res);
      const timer = setInterval(() => res.write('data: {"choices":[]}\n\n'), 20);
      res.on("close", () => {
        closed = true;
        clearInterval(timer);
      });
    });
    const stream = await client().openStream("/left", {}, signal());
    for await (const _event of stream.events) break;
    for (let i = 0; i < 50 && !closed; i++) await sleep(10);
    assert.equal(closed, true);
  });

  it("keeps a character whose UTF-8 bytes arrive in two pieces", async () => {
    routes.set("/v1/split-utf8", (_req, res) => {
      const bytes = Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"kopi ☕ panas"}}]}\n\ndata: [DONE]\n\n', "utf8");
      const cut = bytes.indexOf(Buffer.from("☕", "utf8")) + 1;
      eventStream(res).write(bytes.subarray(0, cut));
      setTimeout(() => res.end(bytes.subarray(cut)), 30);
    });
    const events = await collect((await client().openStream("/split-utf8", {}, signal())).events);
    assert.deepEqual(events, [{ choices: [{ index: 0, delta: { content: "kopi ☕ panas" } }] }]);
  });
});

// undici checks its parser timeouts on a ~0.5 s tick, so each of these takes up to ~1 s: they run together.
describe("UpstreamClient timeouts", { concurrency: true }, () => {
  it("postJson: headers later than firstByteMs", async () => {
    routes.set("/v1/slow", () => undefined);
    const started = performance.now();
    await assert.rejects(client().postJson("/slow", {}, signal()), failure("timeout", /sent no answer within/));
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= TIMEOUTS.firstByteMs - 20 && elapsed < 2_000, `${Math.round(elapsed)} ms`);
  });

  it("postJson: a body silent longer than idleMs", async () => {
    routes.set("/v1/stall", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"data": [');
    });
    await assert.rejects(client().postJson("/stall", {}, signal()), failure("timeout", /went silent/));
  });

  it("openStream: headers later than firstByteMs", async () => {
    routes.set("/v1/slow-stream", () => undefined);
    await assert.rejects(client().openStream("/slow-stream", {}, signal()), failure("timeout", /sent no answer within/));
  });

  it("openStream: a stream silent longer than idleMs", async () => {
    routes.set("/v1/silent", (_req, res) => void eventStream(res).write('data: {"choices":[{"index":0,"delta":{"content":"Sel"}}]}\n\n'));
    const stream = await client().openStream("/silent", {}, signal());
    const got: unknown[] = [];
    const started = performance.now();
    await assert.rejects(
      (async () => {
        for await (const event of stream.events) got.push(event);
      })(),
      failure("timeout", /went silent/),
    );
    assert.equal(got.length, 1);
    assert.ok(performance.now() - started < 2_000);
  });

  it("postJson: the silence message names idleMs", async () => {
    routes.set("/v1/stall-named", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"data": [');
    });
    const halfSecond = new UpstreamClient({ id: "r1", baseUrl: `http://127.0.0.1:${port}/v1`, model: "svc-chat", apiKey: null, tls: null }, { ...TIMEOUTS, idleMs: 500 });
    clients.push(halfSecond);
    await assert.rejects(halfSecond.postJson("/stall-named", {}, signal()), failure("timeout", /went silent for 0.5 s/));
  });
});

describe("errorOf", () => {
  it("reads OpenAI's error body: message and code (or type)", () => {
    assert.deepEqual(errorOf(JSON.stringify({ error: { message: "model not found", type: "invalid_request_error", code: "model_not_found" } })), { message: "model not found", code: "model_not_found" });
    assert.deepEqual(errorOf(JSON.stringify({ error: { message: "bad input", type: "invalid_request_error", code: null } })), { message: "bad input", code: "invalid_request_error" });
    assert.deepEqual(errorOf(JSON.stringify({ error: { code: 400, message: "the request exceeds the available context size", type: "exceed_context_size_error" } })), {
      message: "the request exceeds the available context size",
      code: "exceed_context_size_error",
    });
    assert.deepEqual(errorOf(JSON.stringify({ error: { message: "x", code: "Not A Code!" } })), { message: "x", code: null });
  });

  it("reads string errors, FastAPI's detail and vLLM's flat body", () => {
    assert.deepEqual(errorOf(JSON.stringify({ error: "Model is loading" })), { message: "Model is loading", code: null });
    assert.deepEqual(errorOf(JSON.stringify({ detail: "Not Found" })), { message: "Not Found", code: null });
    assert.deepEqual(errorOf(JSON.stringify({ object: "error", message: "max_tokens must be at least 1", type: "BadRequestError", code: 400 })), { message: "max_tokens must be at least 1", code: null });
  });

  it("keeps a short one-line snippet of HTML and text, and says when there was no body", () => {
    const html = errorOf("<html>\n<head><title>502 Bad Gateway</title></head>\n<body><center><h1>502 Bad Gateway</h1></center></body>\n</html>");
    assert.equal(html.code, null);
    assert.equal(html.message, "502 Bad Gateway 502 Bad Gateway");
    assert.deepEqual(errorOf(""), { message: "(no body)", code: null });
    assert.deepEqual(errorOf("  \n "), { message: "(no body)", code: null });
    const long = errorOf("x".repeat(1000)).message;
    assert.equal(long, `${"x".repeat(300)}…`);
  });
});

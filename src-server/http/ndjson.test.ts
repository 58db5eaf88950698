import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import express from "express";
import { pipeNdjson } from "./ndjson.js";

describe("pipeNdjson", () => {
  let server: ReturnType<ReturnType<typeof express>["listen"]>;
  let base = "";
  let stopped: Promise<boolean>;
  let stop: (value: boolean) => void = () => {};

  before(async () => {
    const app = express();
    app.get("/ok", async (_req, res) => {
      await pipeNdjson(res, [{ a: 1 }, { b: "two\nlines" }], () => ({ error: "unused" }));
    });
    app.get("/fails", async (_req, res) => {
      async function* failing() {
        yield { message: "first" };
        throw new Error("the model crashed");
      }
      await pipeNdjson(res, failing(), (error) => ({ error: (error as Error).message }));
    });
    app.get("/endless", async (_req, res) => {
      stopped = new Promise((resolve) => (stop = resolve));
      async function* endless() {
        try {
          for (let i = 0; ; i++) {
            yield { i, pad: "x".repeat(1000) };
            await new Promise((r) => setTimeout(r, 1));
          }
        } finally {
          stop(true);
        }
      }
      await pipeNdjson(res, endless(), () => ({ error: "unused" }));
    });
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("writes one JSON object per line as application/x-ndjson", async () => {
    const res = await fetch(`${base}/ok`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/x-ndjson/);
    assert.equal(await res.text(), '{"a":1}\n{"b":"two\\nlines"}\n');
  });

  it("ends a failing stream with an error line", async () => {
    const text = await (await fetch(`${base}/fails`)).text();
    assert.deepEqual(text.trimEnd().split("\n").map((l) => JSON.parse(l)), [{ message: "first" }, { error: "the model crashed" }]);
  });

  it("stops pulling from the producer once the client is gone", async () => {
    const controller = new AbortController();
    const res = await fetch(`${base}/endless`, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    assert.equal(await stopped, true, "the producer was closed");
  });
});

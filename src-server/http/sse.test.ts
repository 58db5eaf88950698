import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { describe, it } from "node:test";
import express from "express";
import { pipeSse } from "./sse.js";

async function serve(handler: express.RequestHandler): Promise<{ port: number; close: () => Promise<void> }> {
  const app = express();
  app.get("/", handler);
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe("pipeSse", () => {
  it("frames each item as a data event, then [DONE], with event-stream headers", async () => {
    async function* items() {
      yield { a: 1 };
      yield { b: "x\ny" };
    }
    const server = await serve(async (_req, res) => pipeSse(res, items(), { done: true, onError: () => ({}) }));
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/`);
      assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
      assert.equal(await response.text(), 'data: {"a":1}\n\ndata: {"b":"x\\ny"}\n\ndata: [DONE]\n\n');
    } finally {
      await server.close();
    }
  });

  it("sends an error event when the source fails mid-stream", async () => {
    async function* items() {
      yield { ok: true };
      throw new Error("engine fell over");
    }
    const server = await serve(async (_req, res) => pipeSse(res, items(), { done: true, onError: () => ({ error: { code: "boom" } }) }));
    try {
      const text = await (await fetch(`http://127.0.0.1:${server.port}/`)).text();
      assert.equal(text, 'data: {"ok":true}\n\ndata: {"error":{"code":"boom"}}\n\n');
    } finally {
      await server.close();
    }
  });

  it("stops pulling from the producer while a slow client does not read (backpressure), and cancels it on disconnect", async () => {
    let produced = 0;
    let finalized = false;
    const big = "x".repeat(64 * 1024);
    async function* items() {
      try {
        for (;;) {
          produced++;
          yield { big };
        }
      } finally {
        finalized = true;
      }
    }
    const server = await serve(async (_req, res) => pipeSse(res, items(), { done: true, onError: () => ({}) }));
    try {
      const socket = net.connect(server.port, "127.0.0.1");
      await new Promise<void>((r) => socket.once("connect", () => r()));
      socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      socket.pause(); // never read: the kernel buffers fill, then write() returns false
      await new Promise((r) => setTimeout(r, 500));
      const stalledAt = produced;
      await new Promise((r) => setTimeout(r, 300));
      // An unbounded producer would have made thousands of 64 KiB events by now.
      assert.ok(produced < 400, `producer ran ahead: ${produced} events`);
      assert.equal(produced, stalledAt, "producer kept running while the client was not reading");
      socket.destroy();
      for (let i = 0; i < 50 && !finalized; i++) await new Promise((r) => setTimeout(r, 20));
      assert.ok(finalized, "producer was not cancelled after the client disconnected");
    } finally {
      await server.close();
    }
  });
});

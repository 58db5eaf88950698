/**
 * A local HTTP file server for download tests: serves byte ranges, can cut a response
 * short after N bytes to simulate a dropped connection, and counts requests.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface FileServer {
  url: string;
  requests: { range: string | undefined }[];
  /** Cut the next full response after this many bytes (then behave normally). */
  dropNextAfter: number | null;
  /** Ignore Range headers (an old server). */
  ignoreRange: boolean;
  close(): Promise<void>;
}

export async function startFileServer(files: Record<string, Buffer>): Promise<FileServer> {
  const state: FileServer = { url: "", requests: [], dropNextAfter: null, ignoreRange: false, close: async () => {} };
  const server = http.createServer((req, res) => {
    state.requests.push({ range: req.headers.range });
    const body = files[req.url ?? ""];
    if (!body) {
      res.writeHead(404).end("not found");
      return;
    }
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
    if (range && !state.ignoreRange) {
      const start = Number(range[1]);
      if (start >= body.length) {
        res.writeHead(416, { "content-range": `bytes */${body.length}` }).end();
        return;
      }
      res.writeHead(206, { "content-length": body.length - start, "content-range": `bytes ${start}-${body.length - 1}/${body.length}` });
      res.end(body.subarray(start));
      return;
    }
    res.writeHead(200, { "content-length": body.length });
    if (state.dropNextAfter !== null) {
      const cut = state.dropNextAfter;
      state.dropNextAfter = null;
      // Cut the connection a moment after the bytes left, so the client has them (a busy machine may take its time to read).
      res.write(body.subarray(0, cut), () => setTimeout(() => res.destroy(), 300));
      return;
    }
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return state;
}

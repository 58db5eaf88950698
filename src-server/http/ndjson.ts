/**
 * Newline-delimited JSON streams (`application/x-ndjson`), as Ollama's API streams: one
 * JSON object per line. Like the SSE writer, it honours backpressure (waits for `drain`)
 * and stops pulling, which cancels the producer, as soon as the client is gone.
 */
import type { Response } from "express";

function write(res: Response, line: string): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.resolve();
  if (res.write(line)) return Promise.resolve();
  return new Promise((resolve) => {
    const settle = (): void => {
      res.off("drain", settle);
      res.off("close", settle);
      resolve();
    };
    res.on("drain", settle);
    res.on("close", settle);
  });
}

/**
 * Streams every item of `source` as one line of JSON. An error after the stream started
 * becomes a last line made by `onError` (Ollama's `{"error":"…"}`); the response then ends.
 */
export async function pipeNdjson(res: Response, source: AsyncIterable<unknown> | Iterable<unknown>, onError: (error: unknown) => unknown): Promise<void> {
  res.status(200);
  res.setHeader("Content-Type", "application/x-ndjson; charset=utf-8");
  res.setHeader("Cache-Control", "no-cache, no-transform");
  res.setHeader("X-Accel-Buffering", "no");
  res.flushHeaders();
  const gone = () => res.destroyed || res.writableEnded;
  try {
    for await (const item of source) {
      if (gone()) break;
      await write(res, `${JSON.stringify(item)}\n`);
    }
  } catch (error) {
    if (!gone()) await write(res, `${JSON.stringify(onError(error))}\n`);
  }
  if (!gone()) res.end();
}

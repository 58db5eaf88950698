/**
 * The one server-sent-events writer: frames `data:` events, honours backpressure
 * (waits for `drain`), and stops when the client goes away.
 */
import type { Response } from "express";

export class SseWriter {
  private opened = false;

  constructor(private readonly res: Response) {}

  /** True once the client has gone or the stream was ended. */
  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  /** Sends the event-stream headers now, so the client sees the stream start. */
  open(): void {
    if (this.opened) return;
    this.opened = true;
    this.res.status(200);
    this.res.setHeader("Content-Type", "text/event-stream; charset=utf-8");
    this.res.setHeader("Cache-Control", "no-cache, no-transform");
    this.res.setHeader("Connection", "keep-alive");
    this.res.setHeader("X-Accel-Buffering", "no");
    this.res.flushHeaders();
  }

  /** Writes `data: <json>\n\n`; resolves once the socket can take more. */
  send(data: unknown): Promise<void> {
    return this.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  /** Writes a named event (`event: <name>`), for streams that multiplex kinds. */
  sendEvent(event: string, data: unknown): Promise<void> {
    return this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** A comment line; keeps idle connections alive through proxies. */
  comment(text: string): Promise<void> {
    return this.write(`: ${text.replace(/[\r\n]+/g, " ")}\n\n`);
  }

  /** Writes the terminal `data: [DONE]` and ends the response. */
  async done(): Promise<void> {
    await this.write("data: [DONE]\n\n");
    this.end();
  }

  end(): void {
    if (!this.closed) this.res.end();
  }

  private write(chunk: string): Promise<void> {
    this.open();
    if (this.closed) return Promise.resolve();
    if (this.res.write(chunk)) return Promise.resolve();
    return new Promise((resolve) => {
      const settle = (): void => {
        this.res.off("drain", settle);
        this.res.off("close", settle);
        resolve();
      };
      this.res.on("drain", settle);
      this.res.on("close", settle);
    });
  }
}

/**
 * Streams every item of `source` as an SSE event, then `data: [DONE]` when asked.
 * Stops pulling (which cancels the producer) as soon as the client is gone. An error
 * after the stream started is sent as a final `{"error":...}` event.
 */
export async function pipeSse(
  res: Response,
  source: AsyncIterable<unknown>,
  options: { done: boolean; onError: (error: unknown) => unknown },
): Promise<void> {
  const sse = new SseWriter(res);
  sse.open();
  try {
    for await (const item of source) {
      if (sse.closed) break;
      await sse.send(item);
    }
    if (options.done) await sse.done();
    else sse.end();
  } catch (error) {
    if (!sse.closed) await sse.send(options.onError(error));
    sse.end();
  }
}

/**
 * As `pipeSse`, for streams of named events (`event: <name>` then `data:`), as Anthropic's
 * Messages API sends them; an error after the stream started is the event `onError` makes.
 */
export async function pipeNamedSse(res: Response, source: AsyncIterable<{ event: string; data: unknown }>, onError: (error: unknown) => { event: string; data: unknown }): Promise<void> {
  const sse = new SseWriter(res);
  sse.open();
  try {
    for await (const item of source) {
      if (sse.closed) break;
      await sse.sendEvent(item.event, item.data);
    }
  } catch (error) {
    if (!sse.closed) {
      const failure = onError(error);
      await sse.sendEvent(failure.event, failure.data);
    }
  }
  sse.end();
}

/** Server-sent events over fetch: a response body fed through eventsource-parser (never split by hand). */
import { createParser } from "eventsource-parser";

/**
 * Calls `onData` with each event's `data` (joined lines, as the SSE spec says) until the
 * stream ends or `onData` returns `"stop"`. Multi-byte characters split across reads are
 * decoded correctly (streaming TextDecoder).
 */
export async function readSse(body: ReadableStream<Uint8Array>, onData: (data: string, event: string | undefined) => void | "stop"): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let stopped = false;
  const parser = createParser({
    onEvent: (message) => {
      if (!stopped && onData(message.data, message.event) === "stop") stopped = true;
    },
  });
  try {
    while (!stopped) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    if (!stopped) {
      const rest = decoder.decode();
      if (rest) parser.feed(rest);
    }
  } finally {
    if (stopped) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** Parses one SSE data payload as JSON; a malformed payload is a protocol error. */
export function parseJsonData<T>(data: string): T {
  try {
    return JSON.parse(data) as T;
  } catch {
    throw new Error(`the server sent an event that is not JSON: ${data.slice(0, 80)}`);
  }
}

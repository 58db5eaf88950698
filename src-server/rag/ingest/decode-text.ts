/**
 * Turns the bytes of a text file into a string: UTF-8 (BOM stripped), UTF-16
 * LE/BE when a BOM says so, and Windows-1252 (a superset of Latin-1) when the
 * bytes are not valid UTF-8. Line endings are normalised to "\n".
 */

export type TextEncoding = "utf-8" | "utf-16le" | "utf-16be" | "windows-1252";

export interface DecodedText {
  text: string;
  encoding: TextEncoding;
}

/** Decodes text bytes; never throws (invalid UTF-8 falls back to Windows-1252). */
export function decodeText(bytes: Uint8Array): DecodedText {
  let encoding: TextEncoding;
  let text: string;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    encoding = "utf-16le";
    text = new TextDecoder("utf-16le").decode(bytes);
  } else if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    encoding = "utf-16be";
    text = new TextDecoder("utf-16be").decode(bytes);
  } else {
    try {
      // The decoder strips a UTF-8 BOM itself (ignoreBOM defaults to false).
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      encoding = "utf-8";
    } catch {
      text = new TextDecoder("windows-1252").decode(bytes);
      encoding = "windows-1252";
    }
  }
  return { text: normalizeNewlines(text), encoding };
}

/** CRLF and lone CR become LF; NUL characters are dropped. */
export function normalizeNewlines(text: string): string {
  return text.replace(/\r\n?/g, "\n").replace(/\0/g, "");
}

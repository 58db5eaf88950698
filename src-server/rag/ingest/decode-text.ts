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
      text = decodeWindows1252(bytes);
      encoding = "windows-1252";
    }
  }
  return { text: normalizeNewlines(text), encoding };
}

/**
 * Windows-1252 differs from ISO-8859-1 only in 0x80–0x9F (€, curly quotes, dashes…).
 * Node builds without full ICU decode the "windows-1252" label as ISO-8859-1, so
 * that range is mapped here.
 */
export const WINDOWS_1252_C1 = "\u20AC\u0081\u201A\u0192\u201E\u2026\u2020\u2021\u02C6\u2030\u0160\u2039\u0152\u008D\u017D\u008F" + "\u0090\u2018\u2019\u201C\u201D\u2022\u2013\u2014\u02DC\u2122\u0161\u203A\u0153\u009D\u017E\u0178";

export function decodeWindows1252(bytes: Uint8Array): string {
  return new TextDecoder("latin1").decode(bytes).replace(/[\x80-\x9F]/g, (c) => WINDOWS_1252_C1[c.charCodeAt(0) - 0x80] ?? c);
}

/** CRLF and lone CR become LF; NUL characters are dropped. */
export function normalizeNewlines(text: string): string {
  return text.replace(/\r\n?/g, "\n").replace(/\0/g, "");
}

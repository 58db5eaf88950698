/**
 * An Outlook message's RTF body (PidTagRtfCompressed), for messages that have no plain or
 * HTML body: decompressed ([MS-OXRTFCP]) into a bounded buffer, then read as text, or as
 * the HTML that Outlook encapsulated in it (`\fromhtml1`, [MS-OXRTFEX]). Not an RTF
 * renderer: text, paragraphs and characters come through; formatting does not.
 */
import { ParseError } from "./types.js";

/** Largest decompressed RTF accepted, in bytes. */
export const MAX_RTF_BYTES = 8 * 1024 * 1024;

const COMPRESSED = 0x75465a4c; // "LZFu"
const UNCOMPRESSED = 0x414c454d; // "MELA"
const DICTIONARY =
  "{\\rtf1\\ansi\\mac\\deff0\\deftab720{\\fonttbl;}{\\f0\\fnil \\froman \\fswiss \\fmodern \\fscript \\fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\\colortbl\\red0\\green0\\blue0\r\n\\par \\pard\\plain\\f0\\fs20\\b\\i\\u\\tab\\tx";

/**
 * Decompresses a compressed-RTF stream; the output never exceeds the size it declares
 * (nor `MAX_RTF_BYTES`), whatever its tokens say.
 * @throws ParseError `corrupt_document` (not compressed RTF), `document_too_large`.
 */
export function decompressRtf(data: Uint8Array): Uint8Array {
  if (data.length < 16) throw new ParseError("corrupt_document", "The message's RTF body is damaged (shorter than its header).");
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const compressedSize = view.getUint32(0, true);
  const rawSize = view.getUint32(4, true);
  const type = view.getUint32(8, true);
  if (rawSize > MAX_RTF_BYTES) throw new ParseError("document_too_large", `The message's RTF body is larger than ${MAX_RTF_BYTES / 1024 ** 2} MB.`);
  const end = Math.min(data.length, compressedSize + 4);
  if (type === UNCOMPRESSED) return data.slice(16, Math.min(end, 16 + rawSize));
  if (type !== COMPRESSED) throw new ParseError("corrupt_document", "The message's RTF body is damaged (unknown compression).");
  // A 4 KiB ring dictionary primed with the format's initial text; references copy from it.
  const dictionary = new Uint8Array(4096);
  for (let i = 0; i < DICTIONARY.length; i++) dictionary[i] = DICTIONARY.charCodeAt(i);
  let write = DICTIONARY.length;
  const out = new Uint8Array(rawSize);
  let length = 0;
  const put = (byte: number): boolean => {
    dictionary[write] = byte;
    write = (write + 1) & 4095;
    if (length === rawSize) return false;
    out[length++] = byte;
    return true;
  };
  for (let at = 16; at < end; ) {
    const control = data[at++]!;
    for (let bit = 0; bit < 8 && at < end; bit++) {
      if ((control & (1 << bit)) === 0) {
        if (!put(data[at++]!)) return out;
        continue;
      }
      if (at + 1 >= end) return out.subarray(0, length);
      const token = (data[at]! << 8) | data[at + 1]!;
      at += 2;
      let read = token >> 4;
      // A reference to the write position itself ends the stream.
      if (read === write) return out.subarray(0, length);
      for (let n = (token & 15) + 2; n > 0; n--) {
        if (!put(dictionary[read]!)) return out;
        read = (read + 1) & 4095;
      }
    }
  }
  return out.subarray(0, length);
}

/** Destinations whose content is not the message's text. */
const SKIPPED = new Set(["fonttbl", "colortbl", "stylesheet", "info", "pict", "object", "header", "footer", "headerl", "headerr", "headerf", "footerl", "footerr", "footerf", "themedata", "colorschememapping", "latentstyles", "datastore", "xmlnstbl", "listtable", "listoverridetable", "rsidtbl", "generator", "pgdsctbl", "filetbl", "revtbl", "mmathPr", "fldinst"]);
const SYMBOLS: Record<string, string> = { par: "\n", line: "\n", tab: "\t", emdash: "\u2014", endash: "\u2013", lquote: "\u2018", rquote: "\u2019", ldblquote: "\u201c", rdblquote: "\u201d", bullet: "\u2022", emspace: " ", enspace: " " };

interface GroupState {
  skip: boolean;
  htmlTag: boolean;
  htmlRtf: boolean;
  uc: number;
}

/**
 * The body an RTF document carries: the HTML Outlook encapsulated (`\fromhtml1`), else its text.
 * Characters come from `\uN`, `\'hh` (in the document's `\ansicpg` code page) and plain text.
 */
export function rtfBody(rtf: Uint8Array): { kind: "html" | "text"; content: string } {
  const source = Buffer.from(rtf.buffer, rtf.byteOffset, rtf.byteLength).toString("latin1");
  const head = source.slice(0, 4096);
  const fromHtml = /\\fromhtml1/.test(head);
  const decoder = codePageDecoder(Number(/\\ansicpg(\d{3,5})/.exec(head)?.[1] ?? 1252));
  const parts: string[] = [];
  let pending: number[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    parts.push(decoder.decode(new Uint8Array(pending)));
    pending = [];
  };
  const stack: GroupState[] = [];
  let state: GroupState = { skip: false, htmlTag: false, htmlRtf: false, uc: 1 };
  let skipChars = 0;
  const visible = () => !state.skip && (!fromHtml || state.htmlTag || !state.htmlRtf);
  const emit = (text: string) => {
    if (skipChars > 0) return void skipChars--;
    if (!visible()) return;
    flush();
    parts.push(text);
  };
  for (let i = 0; i < source.length; ) {
    const c = source[i]!;
    if (c === "{" || c === "}") {
      flush();
      if (c === "{") {
        stack.push(state);
        state = { ...state };
      } else state = stack.pop() ?? state;
      i++;
      continue;
    }
    if (c === "\r" || c === "\n") {
      i++;
      continue;
    }
    if (c !== "\\") {
      emit(c);
      i++;
      continue;
    }
    const next = source[i + 1] ?? "";
    if (next === "'") {
      const byte = parseInt(source.slice(i + 2, i + 4), 16);
      i += 4;
      if (skipChars > 0) skipChars--;
      else if (visible() && !Number.isNaN(byte)) pending.push(byte);
      continue;
    }
    if (!/[a-zA-Z]/.test(next)) {
      // Control symbols: escaped characters, a non-breaking space, an optional hyphen, a destination mark.
      if (next === "*") state.skip = !(fromHtml && source.startsWith("\\htmltag", i + 2)) || state.skip;
      else if (next === "~") emit("\u00a0");
      else if (next === "_") emit("-");
      else if (next === "\\" || next === "{" || next === "}") emit(next);
      i += 2;
      continue;
    }
    const word = /^\\([a-zA-Z]{1,32})(-?\d{1,10})? ?/.exec(source.slice(i, i + 48))!;
    i += word[0].length;
    const name = word[1]!;
    const param = word[2] === undefined ? null : Number(word[2]);
    if (SKIPPED.has(name)) state.skip = true;
    else if (name.startsWith("htmltag")) state.htmlTag = true;
    else if (name === "htmlrtf") state.htmlRtf = param !== 0;
    else if (name === "uc") state.uc = param ?? 1;
    else if (name === "u" && param !== null) {
      emit(String.fromCharCode(param < 0 ? param + 65536 : param));
      skipChars = state.uc;
    } else if (SYMBOLS[name] !== undefined) emit(SYMBOLS[name]);
  }
  flush();
  const content = parts.join("");
  return { kind: fromHtml ? "html" : "text", content: fromHtml ? content : content.replace(/[ \t]+\n/g, "\n") };
}

function codePageDecoder(codePage: number): { decode(bytes: Uint8Array): string } {
  const label = codePage === 65001 ? "utf-8" : codePage === 932 ? "shift_jis" : codePage === 936 ? "gbk" : codePage === 949 ? "euc-kr" : codePage === 950 ? "big5" : `windows-${codePage}`;
  try {
    return new TextDecoder(label);
  } catch {
    return new TextDecoder("windows-1252");
  }
}

import { randomBytes } from "node:crypto";

/** Type prefixes for every identifier the service hands out (guide §2). */
export type IdPrefix = "ws_" | "key_" | "corp_" | "doc_" | "chk_" | "ans_" | "chatcmpl-" | "cmpl-" | "resp_" | "req_" | "job_" | "ses_" | "conv_" | "msg_" | "pull_" | "aud_" | "sa_" | "rerank-";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** Random base62 string of `length` characters (unbiased: rejection sampling). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** New identifier with a type prefix and 24 random base62 characters (~143 bits). */
export function newId(prefix: IdPrefix): string {
  return prefix + randomBase62(24);
}

/** Current time in Unix seconds, the unit of every timestamp on the wire. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

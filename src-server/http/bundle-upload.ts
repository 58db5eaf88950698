/**
 * Receives a corpus bundle for import: multipart/form-data with an optional `passphrase`
 * field first, then one `file` part, handed to `stage` as it streams (never held in memory).
 * A passphrase sent after the file is refused: the bundle would have been read without it.
 */
import busboy from "busboy";
import type { Request } from "express";
import type { Readable } from "node:stream";
import { ServiceError, invalidRequest } from "../errors.js";

export async function receiveBundle<T>(req: Request, stage: (file: Readable, fields: { passphrase?: string }) => Promise<T>): Promise<T> {
  if (!req.is("multipart/form-data")) {
    throw new ServiceError("unsupported_media_type", "send the bundle as multipart/form-data: an optional 'passphrase' field, then one 'file' part", { code: "unsupported_media_type" });
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers, limits: { files: 2, fields: 2, fieldSize: 4096, parts: 4 } });
  } catch (error) {
    throw invalidRequest(`malformed multipart request: ${(error as Error).message}`, "invalid_multipart");
  }
  const fields: { passphrase?: string } = {};
  const state: { failure: ServiceError | null; staging: Promise<T> | null; files: number } = { failure: null, staging: null, files: 0 };
  parser.on("field", (name, value, info) => {
    if (name !== "passphrase") state.failure ??= invalidRequest(`unexpected form field '${name}' (expected 'passphrase' and one 'file' part)`, "invalid_parameter", name);
    else if (info.valueTruncated) state.failure ??= invalidRequest("the passphrase is too long (4 KiB at most)", "invalid_parameter", "passphrase");
    else if (state.files > 0) state.failure ??= invalidRequest("send the 'passphrase' field before the 'file' part", "invalid_parameter", "passphrase");
    else fields.passphrase = value;
  });
  parser.on("file", (name, stream) => {
    stream.on("error", () => undefined);
    state.files++;
    if (name !== "file" || state.files > 1 || state.failure) {
      state.failure ??= invalidRequest(name !== "file" ? `unexpected file part '${name}': the bundle goes in a part named 'file'` : "send one bundle per request", "invalid_parameter", name);
      stream.resume();
      return;
    }
    state.staging = stage(stream, { ...fields });
    // Whatever it does, the rest of the part is drained so the parser can finish.
    state.staging.catch(() => stream.resume());
  });
  await new Promise<void>((resolve, reject) => {
    parser.on("close", resolve);
    parser.on("error", (error: Error) => reject(invalidRequest(`malformed multipart request: ${error.message}`, "invalid_multipart")));
    req.on("aborted", () => reject(invalidRequest("the upload was aborted by the client", "request_aborted")));
    req.pipe(parser);
  }).catch(async (error: unknown) => {
    await state.staging?.catch(() => undefined);
    throw error;
  });
  if (state.failure) {
    await state.staging?.catch(() => undefined);
    throw state.failure;
  }
  if (!state.staging) throw invalidRequest("the request holds no 'file' part with a bundle", "no_files", "file");
  return state.staging;
}

/**
 * Streams a multipart upload (busboy) file by file into the document service; nothing
 * is held in memory beyond a small head of each file. The `metadata` part may come
 * before or after the files: documents are created only once the request is complete.
 */
import busboy from "busboy";
import type { Request } from "express";
import { ServiceError, invalidRequest } from "../errors.js";
import type { DocumentService, FileRejection, StagedFile } from "../rag/document-service.js";

export interface UploadLimits {
  maxFiles: number;
  maxFileBytes: number;
}

export interface ParsedUpload {
  staged: StagedFile[];
  rejected: FileRejection[];
  metadataText: string | null;
}

export async function receiveUpload(req: Request, corpusId: string, documents: DocumentService, limits: UploadLimits): Promise<ParsedUpload> {
  if (!req.is("multipart/form-data")) {
    throw new ServiceError("unsupported_media_type", "upload documents as multipart/form-data with one or more 'file' parts", { code: "unsupported_media_type" });
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      // One more than allowed, so that "too many" is seen rather than silently cut.
      limits: { files: limits.maxFiles + 1, fileSize: limits.maxFileBytes, fields: 8, fieldSize: 256 * 1024, parts: limits.maxFiles + 10 },
    });
  } catch (error) {
    throw invalidRequest(`malformed multipart request: ${(error as Error).message}`, "invalid_multipart");
  }
  const staged: StagedFile[] = [];
  const rejected: FileRejection[] = [];
  let metadataText: string | null = null;
  let fileCount = 0;
  // Set from busboy's callbacks; an object so that TypeScript does not narrow it away.
  const state: { failure: ServiceError | null } = { failure: null };
  let work = Promise.resolve();

  parser.on("file", (field, stream, info) => {
    // A body cut short makes busboy fail the file stream; the parser's own "error" event
    // fails the request, so the stream's error only needs to be observed (never thrown).
    stream.on("error", () => undefined);
    if (field !== "file") {
      state.failure ??= invalidRequest(`unexpected file part '${field}': files go in parts named 'file'`, "invalid_parameter", field);
      stream.resume();
      return;
    }
    fileCount++;
    if (fileCount > limits.maxFiles) {
      state.failure ??= invalidRequest(`an upload takes at most ${limits.maxFiles} files`, "too_many_files", "file");
      stream.resume();
      return;
    }
    // Files are staged one after another, in order; busboy waits while we read.
    work = work.then(async () => {
      if (state.failure) {
        stream.resume();
        return;
      }
      try {
        const result = await documents.stage(corpusId, info.filename ?? "unnamed", stream, () => stream.truncated === true);
        if ("documentId" in result) staged.push(result);
        else rejected.push(result);
      } catch (error) {
        // Storage failed: drain this part (and, through state.failure, every later one)
        // so busboy can finish, then fail the request. The chain itself never rejects:
        // a rejected link would skip later parts and leave them undrained.
        stream.resume();
        state.failure ??= new ServiceError("server", "The uploaded file could not be stored.", { code: "storage_failed", cause: error });
      }
    });
  });
  parser.on("field", (name, value, info) => {
    if (name !== "metadata") {
      state.failure ??= invalidRequest(`unexpected form field '${name}' (expected 'file' parts and an optional 'metadata')`, "invalid_parameter", name);
    } else if (info.valueTruncated) {
      state.failure ??= invalidRequest("metadata is too large (256 KiB at most)", "invalid_parameter", "metadata");
    } else {
      metadataText = value;
    }
  });
  parser.on("filesLimit", () => {
    state.failure ??= invalidRequest(`an upload takes at most ${limits.maxFiles} files`, "too_many_files", "file");
  });

  await new Promise<void>((resolve, reject) => {
    parser.on("close", resolve);
    parser.on("error", (error: Error) => reject(invalidRequest(`malformed multipart request: ${error.message}`, "invalid_multipart")));
    req.on("aborted", () => reject(invalidRequest("the upload was aborted by the client", "request_aborted")));
    req.pipe(parser);
  }).catch(async (error: unknown) => {
    await work.catch(() => undefined);
    await documents.discard(corpusId, staged);
    throw error;
  });
  try {
    await work;
  } catch (error) {
    await documents.discard(corpusId, staged);
    throw error;
  }
  if (state.failure) {
    await documents.discard(corpusId, staged);
    throw state.failure;
  }
  return { staged, rejected, metadataText };
}

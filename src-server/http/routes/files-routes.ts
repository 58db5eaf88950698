/** OpenAI's Files API (`/v1/files`): upload (multipart, streamed into sealed storage), list, retrieve, content, delete. */
import busboy from "busboy";
import { Router, type Request, type RequestHandler } from "express";
import { ServiceError, invalidRequest } from "../../errors.js";
import { FILE_PURPOSES, type FilePurpose, type FileService, type StagedUpload, type UploadRejection } from "../../rag/vector-stores/file-service.js";
import { principalOf, requireScope } from "../authenticate.js";
import type { Trail } from "../audit-trail.js";
import { doc } from "../openapi/route-doc.js";
import { routeParam } from "../route-param.js";
import { parseWith } from "../validate.js";
import { listObject, toPageRequest } from "../wire/list-wire.js";
import { FileListQuerySchema, UploadFieldsSchema, fileDeletedObject, fileObject } from "../wire/vector-store-wire.js";

export interface FilesRouteDeps {
  files: FileService;
  /** The per-file size limit (`rag.maxFileBytes`, as for corpus uploads). */
  maxFileBytes: number;
  /** Admission of costly operations (an upload counts one request). */
  costly: RequestHandler;
  trail: Trail;
}

interface ReceivedFile {
  file: StagedUpload | UploadRejection | null;
  fields: Record<string, string>;
}

/**
 * Streams the one `file` part into sealed storage (nothing held in memory but what is in
 * flight) and collects the form fields, which may come before or after it.
 */
async function receiveFile(req: Request, files: FileService, maxFileBytes: number): Promise<ReceivedFile> {
  if (!req.is("multipart/form-data")) {
    throw new ServiceError("unsupported_media_type", "upload a file as multipart/form-data with a 'file' part and a 'purpose' field", { code: "unsupported_media_type" });
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: req.headers, limits: { files: 2, fileSize: maxFileBytes, fields: 8, fieldSize: 1024, parts: 10 } });
  } catch (error) {
    throw invalidRequest(`malformed multipart request: ${(error as Error).message}`, "invalid_multipart");
  }
  const received: ReceivedFile = { file: null, fields: {} };
  const state: { failure: ServiceError | null } = { failure: null };
  let work = Promise.resolve();
  parser.on("file", (field, stream, info) => {
    // A body cut short fails the file stream; the parser's own error fails the request.
    stream.on("error", () => undefined);
    if (field !== "file" || received.file !== null || state.failure) {
      state.failure ??= invalidRequest(field === "file" ? "upload one file per request" : `unexpected file part '${field}': the file goes in the part named 'file'`, "invalid_parameter", field);
      stream.resume();
      return;
    }
    received.file = { filename: "", bytes: 0, error: { code: "empty_file", message: "File is empty." } };
    work = work.then(async () => {
      try {
        received.file = await files.stage(info.filename ?? "unnamed", stream, () => stream.truncated === true);
      } catch (error) {
        stream.resume();
        state.failure ??= new ServiceError("server", "The uploaded file could not be stored.", { code: "storage_failed", cause: error });
      }
    });
  });
  parser.on("field", (name, value, info) => {
    if (info.valueTruncated) state.failure ??= invalidRequest(`'${name}' is too long`, "invalid_parameter", name);
    else received.fields[name] = value;
  });
  const discard = async () => {
    await work.catch(() => undefined);
    if (received.file && "id" in received.file) await files.discard(received.file);
  };
  await new Promise<void>((resolve, reject) => {
    parser.on("close", resolve);
    parser.on("error", (error: Error) => reject(invalidRequest(`malformed multipart request: ${error.message}`, "invalid_multipart")));
    req.on("aborted", () => reject(invalidRequest("the upload was aborted by the client", "request_aborted")));
    req.pipe(parser);
  }).catch(async (error: unknown) => {
    await discard();
    throw error;
  });
  await work;
  if (state.failure) {
    await discard();
    throw state.failure;
  }
  return received;
}

export function filesRoutes({ files, maxFileBytes, costly, trail }: FilesRouteDeps): Router {
  const router = Router();
  const read = requireScope("rag.read");
  const write = requireScope("rag.write");

  router.post(
    "/v1/files",
    doc({ summary: "Upload a file (OpenAI Files API) for vector stores; sealed at rest, in no corpus until attached", tag: "Vector stores", multipart: { file: "The file (PDF, DOCX, TXT, MD or HTML to be searchable)", purpose: "'assistants' or 'user_data'", "expires_after[anchor]": "'created_at'", "expires_after[seconds]": "3600–2592000" } }),
    trail("file.upload"),
    write,
    costly,
    async (req, res) => {
      const { file, fields } = await receiveFile(req, files, maxFileBytes);
      const staged = file && "id" in file ? file : null;
      try {
        if (!file) throw invalidRequest("Missing required parameter: 'file'.", "missing_required_parameter", "file");
        const parsed = parseWith(UploadFieldsSchema, fields, "form");
        if (!(FILE_PURPOSES as readonly string[]).includes(parsed.purpose)) {
          throw invalidRequest(`Invalid value for 'purpose': '${parsed.purpose}'. Pustaka keeps files for vector stores: use 'assistants' or 'user_data'.`, "unsupported_purpose", "purpose");
        }
        if (!staged) {
          const rejection = file as UploadRejection;
          if (rejection.error.code === "file_too_large") throw new ServiceError("payload_too_large", rejection.error.message, { code: "file_too_large", param: "file" });
          throw invalidRequest(rejection.error.message, rejection.error.code, "file");
        }
        const record = await files.commit(principalOf(res.locals), staged, parsed.purpose as FilePurpose, parsed["expires_after[seconds]"] ?? null);
        Object.assign(res.locals.audit?.data ?? {}, { file_id: record.id, bytes: record.bytes, sha256: record.sha256, purpose: record.purpose });
        res.json(fileObject(record));
      } catch (error) {
        if (staged) await files.discard(staged);
        throw error;
      }
    },
  );
  router.get("/v1/files", doc({ summary: "List the workspace's files", tag: "Vector stores", query: FileListQuerySchema }), read, async (req, res) => {
    const query = parseWith(FileListQuerySchema, req.query, "query string");
    const page = await files.list(principalOf(res.locals), toPageRequest(query), query.purpose);
    res.json(listObject(page.data.map(fileObject), page.hasMore));
  });
  router.get("/v1/files/:fileId", doc({ summary: "One file", tag: "Vector stores" }), read, async (req, res) => {
    res.json(fileObject(await files.get(principalOf(res.locals), routeParam(req, "fileId"))));
  });
  router.get("/v1/files/:fileId/content", doc({ summary: "A file's bytes as uploaded", tag: "Vector stores", response: { contentType: "application/octet-stream" } }), read, async (req, res) => {
    const { bytes } = await files.content(principalOf(res.locals), routeParam(req, "fileId"));
    res.type("application/octet-stream").send(bytes);
  });
  router.delete("/v1/files/:fileId", doc({ summary: "Delete a file (and remove it from every vector store)", tag: "Vector stores" }), trail("file.delete", { params: ["fileId"] }), write, async (req, res) => {
    const { id } = await files.delete(principalOf(res.locals), routeParam(req, "fileId"));
    res.json(fileDeletedObject(id));
  });
  return router;
}

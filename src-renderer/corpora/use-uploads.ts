/** Uploading files into a corpus and following them through indexing. */
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useReducer, useRef } from "react";
import { ApiError } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import type { CorpusEvent, FileRejection } from "../api/contract.js";
import { uploadDocuments } from "../api/corpora-api.js";
import { initialUploadState, MAX_FILES, uploadReducer } from "./upload-reducer.js";

function rejectedOf(body: unknown): FileRejection[] | undefined {
  if (typeof body === "object" && body !== null && Array.isArray((body as { rejected?: unknown }).rejected)) return (body as { rejected: FileRejection[] }).rejected;
  return undefined;
}

export function useUploads(corpusId: string) {
  const client = useApi();
  const queryClient = useQueryClient();
  const [state, dispatch] = useReducer(uploadReducer, initialUploadState);
  const counter = useRef(0);

  const upload = useCallback(
    (files: File[]) => {
      if (files.length === 0) return;
      const batch = `b${++counter.current}`;
      const sent = files.slice(0, MAX_FILES);
      const overflow = files.slice(MAX_FILES);
      dispatch({ type: "add", batch, files: sent });
      if (overflow.length > 0) {
        const over = `${batch}x`;
        dispatch({ type: "add", batch: over, files: overflow });
        dispatch({ type: "failed", batch: over, error: { code: "too_many_files", message: `at most ${MAX_FILES} files per upload` } });
      }
      uploadDocuments(client, corpusId, sent).then(
        (result) => {
          dispatch({ type: "accepted", batch, result });
          void queryClient.invalidateQueries({ queryKey: ["documents", corpusId] });
          void queryClient.invalidateQueries({ queryKey: ["corpus", corpusId] });
        },
        (error: unknown) => {
          const detail = error instanceof ApiError ? { code: error.code ?? "upload_failed", message: error.message } : { code: "network_error", message: String(error) };
          dispatch({ type: "failed", batch, error: detail, rejected: error instanceof ApiError ? rejectedOf(error.body) : undefined });
        },
      );
    },
    [client, corpusId, queryClient],
  );

  const onEvent = useCallback((event: CorpusEvent) => dispatch({ type: "event", event }), []);
  const clearFinished = useCallback(() => dispatch({ type: "clear-finished" }), []);
  return { state, upload, onEvent, clearFinished };
}

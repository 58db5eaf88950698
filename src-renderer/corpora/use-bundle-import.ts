/**
 * One import's life: upload the bundle (bytes sent counted), let the server verify it, show
 * what it is, then import it (the signer the person saw sent back as `expected_signer`) or
 * discard it. A bundle left verified but not imported is discarded when the dialog closes.
 */
import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError, isAbort } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import { commitImport, discardImport, uploadBundle } from "../api/bundles-api.js";
import type { BundleImport, Corpus } from "../api/contract.js";

export type ImportState =
  /** `withoutPassphrase`: the last upload sent none (a key mismatch then most likely means one is needed). */
  | { phase: "choose"; error: unknown; withoutPassphrase: boolean; file: File | null; passphrase: string }
  /** `sent === total`: all sent, the server is verifying. */
  | { phase: "uploading"; file: File; sent: number; total: number }
  | { phase: "preview"; preview: BundleImport; error: unknown }
  | { phase: "importing"; preview: BundleImport }
  | { phase: "done"; corpus: Corpus; preview: BundleImport; reembedded: boolean };

export interface BundleImportFlow {
  state: ImportState;
  upload: (file: File, passphrase: string) => Promise<void>;
  commit: (options: { name: string; embeddingModel: string | null }) => Promise<void>;
  /** Removes the verified bundle from the server and starts over. */
  discard: () => Promise<void>;
  /** Stops an upload under way, back to the form with the file still chosen. */
  stop: () => void;
  /** Stops an upload, discards a bundle not imported, and starts over (the dialog closes). */
  close: () => void;
}

/** Commit refusals after which the verified bundle is still on the server (anything else removed it). */
const KEPT_AFTER = new Set(["bundle_signer_mismatch", "embedding_model_missing", "model_not_embedding", "model_not_found", "import_in_progress", "insufficient_scope", "rate_limit_exceeded", "network_error"]);

const initial: ImportState = { phase: "choose", error: null, withoutPassphrase: false, file: null, passphrase: "" };

export function useBundleImport(): BundleImportFlow {
  const client = useApi();
  const queryClient = useQueryClient();
  const [state, setState] = useState<ImportState>(initial);
  const controller = useRef<AbortController | null>(null);
  // The passphrase is needed again to import (the server keeps none); it stays in memory only.
  const passphrase = useRef<string>("");
  const current = useRef<ImportState>(initial);
  // The state and its copy for callbacks and the unmount cleanup, changed together.
  const update = useCallback((next: ImportState | ((s: ImportState) => ImportState)) => {
    const value = typeof next === "function" ? next(current.current) : next;
    current.current = value;
    setState(value);
  }, []);

  useEffect(
    () => () => {
      controller.current?.abort();
      // Leaving the page with a verified bundle not imported discards it, as closing the dialog does.
      const s = current.current;
      if (s.phase === "preview") void discardImport(client, s.preview.id).catch(() => undefined);
    },
    [client],
  );

  const upload = useCallback(
    async (file: File, secret: string) => {
      const abort = new AbortController();
      controller.current = abort;
      passphrase.current = secret;
      update({ phase: "uploading", file, sent: 0, total: file.size });
      try {
        const preview = await uploadBundle(client, file, secret || null, (sent, total) => update((s) => (s.phase === "uploading" ? { ...s, sent, total } : s)), abort.signal);
        if (abort.signal.aborted) return;
        update({ phase: "preview", preview, error: null });
      } catch (error) {
        if (isAbort(error) || abort.signal.aborted) return;
        update({ phase: "choose", error, withoutPassphrase: !secret, file, passphrase: secret });
      } finally {
        if (controller.current === abort) controller.current = null;
      }
    },
    [client, update],
  );

  const commit = useCallback(
    async ({ name, embeddingModel }: { name: string; embeddingModel: string | null }) => {
      const s = current.current;
      if (s.phase !== "preview") return;
      const { preview } = s;
      update({ phase: "importing", preview });
      try {
        const corpus = await commitImport(client, preview.id, {
          expected_signer: preview.signer.key_id,
          ...(preview.encrypted_for === "passphrase" ? { passphrase: passphrase.current } : {}),
          ...(name.trim() ? { name: name.trim() } : {}),
          ...(embeddingModel ? { embedding_model: embeddingModel } : {}),
        });
        passphrase.current = "";
        void queryClient.invalidateQueries({ queryKey: ["corpora"] });
        update({ phase: "done", corpus, preview, reembedded: embeddingModel !== null });
      } catch (error) {
        const kept = !(error instanceof ApiError) || (error.code !== null && KEPT_AFTER.has(error.code)) || error.status >= 500;
        update(kept ? { phase: "preview", preview, error } : { phase: "choose", error, withoutPassphrase: false, file: null, passphrase: "" });
      }
    },
    [client, queryClient, update],
  );

  const discard = useCallback(async () => {
    const s = current.current;
    if (s.phase === "preview") await discardImport(client, s.preview.id).catch(() => undefined);
    passphrase.current = "";
    update(initial);
  }, [client, update]);

  const stop = useCallback(() => {
    controller.current?.abort();
    const s = current.current;
    if (s.phase === "uploading") update({ phase: "choose", error: null, withoutPassphrase: false, file: s.file, passphrase: passphrase.current });
  }, [update]);

  const close = useCallback(() => {
    controller.current?.abort();
    const s = current.current;
    // Not imported: nothing of it should wait on the server for a day.
    if (s.phase === "preview") void discardImport(client, s.preview.id).catch(() => undefined);
    passphrase.current = "";
    update(initial);
  }, [client, update]);

  return { state, upload, commit, discard, stop, close };
}

/**
 * One export's life: pick where it goes, ask the server for the bundle, write it with the
 * bytes counted, then say how big it is and which key signed it. A failure or a cancel
 * leaves no file behind.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError, isAbort } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import { getRecipient, startExport, type BundleEncryption } from "../api/bundles-api.js";
import { pickBundleFile, removePickedFile, saveBundle, type SavedBundle } from "./bundle-save.js";

export type ExportState =
  | { phase: "form"; error: unknown }
  | { phase: "writing"; bytes: number }
  | { phase: "done"; saved: SavedBundle; signer: string | null };

export interface BundleExport {
  state: ExportState;
  start: (encryption: BundleEncryption) => Promise<void>;
  cancel: () => void;
  reset: () => void;
}

/** `suggestedName`: the file name offered in the save picker; `pickerLabel`: the file type's name there. */
export function useBundleExport(corpusId: string, suggestedName: string, pickerLabel: string): BundleExport {
  const client = useApi();
  const [state, setState] = useState<ExportState>({ phase: "form", error: null });
  const controller = useRef<AbortController | null>(null);
  // Progress arrives per chunk; the screen is redrawn at most once a frame.
  const pending = useRef<{ bytes: number; frame: number | null }>({ bytes: 0, frame: null });
  const mounted = useRef(true);

  useEffect(() => {
    mounted.current = true;
    const progress = pending.current;
    return () => {
      mounted.current = false;
      controller.current?.abort();
      if (progress.frame !== null) cancelAnimationFrame(progress.frame);
    };
  }, []);

  const onBytes = useCallback((bytes: number) => {
    pending.current.bytes = bytes;
    if (pending.current.frame !== null) return;
    pending.current.frame = requestAnimationFrame(() => {
      pending.current.frame = null;
      if (mounted.current) setState((s) => (s.phase === "writing" ? { phase: "writing", bytes: pending.current.bytes } : s));
    });
  }, []);

  const start = useCallback(
    async (encryption: BundleEncryption) => {
      let file: FileSystemFileHandle | null;
      try {
        file = await pickBundleFile(suggestedName, pickerLabel);
      } catch (error) {
        // Closing the picker is a change of mind, not an error.
        if (!isAbort(error)) setState({ phase: "form", error });
        return;
      }
      const abort = new AbortController();
      controller.current = abort;
      setState({ phase: "writing", bytes: 0 });
      try {
        const download = await startExport(client, corpusId, encryption, abort.signal);
        const saved = await saveBundle(download.body, file, download.filename ?? suggestedName, onBytes, abort.signal).catch((error: unknown) => {
          if (isAbort(error) || abort.signal.aborted) throw error;
          // The server had begun: a stream cut short (or a disk that refused a write) is all there is to say.
          throw new ApiError({ status: 0, type: "network_error", code: "export_interrupted", message: error instanceof Error ? error.message : String(error) });
        });
        // The key that signed it is this instance's; the sender passes its id on to the recipient.
        const signer = await getRecipient(client).then((r) => r.signer.key_id, () => null);
        if (mounted.current) setState({ phase: "done", saved, signer });
      } catch (error) {
        await removePickedFile(file);
        if (mounted.current) setState({ phase: "form", error: isAbort(error) || abort.signal.aborted ? null : error });
      } finally {
        if (controller.current === abort) controller.current = null;
      }
    },
    [client, corpusId, suggestedName, pickerLabel, onBytes],
  );

  const cancel = useCallback(() => controller.current?.abort(), []);
  const reset = useCallback(() => {
    controller.current?.abort();
    setState({ phase: "form", error: null });
  }, []);
  return { state, start, cancel, reset };
}

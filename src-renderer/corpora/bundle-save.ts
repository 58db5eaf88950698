/**
 * Where an exported bundle goes. Chromium (and so the desktop app) can stream it straight to
 * a file the person picks (`showSaveFilePicker`), so a bundle of gigabytes never sits in
 * memory; elsewhere it is gathered and offered as a download at the end.
 */
import { downloadBlob } from "../lib/format.js";

/** Chromium's save picker (File System Access API), which TypeScript's DOM types do not list. */
type SavePicker = (options: { suggestedName?: string; types?: { description: string; accept: Record<string, string[]> }[] }) => Promise<FileSystemFileHandle>;

export const BUNDLE_MEDIA_TYPE = "application/vnd.pustaka.bundle";
export const BUNDLE_EXTENSION = ".pustaka";

/** A bundle's file name from a corpus name, as the server makes it (letters, digits, dashes). */
export function bundleFilename(corpusName: string): string {
  const s = corpusName
    .normalize("NFKD")
    .replace(/[^\w\s-]/g, "")
    .trim()
    .replace(/\s+/g, "-")
    .toLowerCase()
    .slice(0, 80);
  return `${s || "corpus"}${BUNDLE_EXTENSION}`;
}

function savePicker(): SavePicker | null {
  const picker = (window as unknown as { showSaveFilePicker?: SavePicker }).showSaveFilePicker;
  return typeof picker === "function" ? picker.bind(window) : null;
}

/**
 * Asks where to save the bundle, when the browser can stream to a file; null when it cannot
 * (the bundle is then downloaded once complete). Must run straight from the click: the picker
 * needs the click's user activation. Rejects with AbortError when the person cancels.
 */
export async function pickBundleFile(suggestedName: string, description: string): Promise<FileSystemFileHandle | null> {
  const picker = savePicker();
  if (!picker) return null;
  return picker({ suggestedName, types: [{ description, accept: { [BUNDLE_MEDIA_TYPE]: [BUNDLE_EXTENSION] } }] });
}

export interface SavedBundle {
  bytes: number;
  /** The file's name as saved (the picked file's, or the download's). */
  name: string;
  /** Written to the picked file as it arrived (else downloaded at the end). */
  streamed: boolean;
}

/**
 * Writes the bundle's bytes to the picked file as they arrive, or gathers them for a
 * download, calling `onBytes` with the total so far. A stream that fails or is aborted
 * leaves nothing: a picked file's writable is aborted, which drops what was written to it.
 */
export async function saveBundle(body: ReadableStream<Uint8Array>, file: FileSystemFileHandle | null, filename: string, onBytes: (bytes: number) => void, signal?: AbortSignal): Promise<SavedBundle> {
  let bytes = 0;
  const counted = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        onBytes(bytes);
        controller.enqueue(chunk);
      },
    }),
  );
  if (file) {
    const writable = await file.createWritable();
    await counted.pipeTo(writable, signal ? { signal } : {});
    return { bytes, name: file.name, streamed: true };
  }
  const parts: Uint8Array[] = [];
  await counted.pipeTo(new WritableStream<Uint8Array>({ write: (chunk) => void parts.push(chunk) }), signal ? { signal } : {});
  downloadBlob(filename, new Blob(parts as BlobPart[], { type: BUNDLE_MEDIA_TYPE }));
  return { bytes, name: filename, streamed: false };
}

/** Removes a picked file that was left empty by a refused export (where the browser can). */
export async function removePickedFile(file: FileSystemFileHandle | null): Promise<void> {
  const remove = (file as unknown as { remove?: () => Promise<void> } | null)?.remove;
  if (typeof remove !== "function") return;
  try {
    await remove.call(file);
  } catch {
    // Not removable here (older Chromium): the empty file stays, which the error message says.
  }
}

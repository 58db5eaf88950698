/** The open-file dialogs the workbench can ask for: documents to index, or GGUF models. */
import type { MessageBoxOptions, OpenDialogOptions } from "electron";
import type { FileDialogKind } from "./bridge.js";

/** The part of Electron's `dialog` (bound to the parent window) used by the app's dialogs. */
export interface DialogLike {
  showOpenDialog(options: OpenDialogOptions): Promise<{ canceled: boolean; filePaths: string[] }>;
  showMessageBox(options: MessageBoxOptions): Promise<{ response: number }>;
}

/** The formats the server indexes (see src-server/rag/ingest/detect-format.ts). */
export const DOCUMENT_EXTENSIONS = ["pdf", "docx", "txt", "text", "md", "markdown", "mdown", "mkd", "html", "htm", "xhtml"];

export function fileDialogOptions(kind: FileDialogKind): OpenDialogOptions {
  return kind === "documents"
    ? { title: "Add documents", properties: ["openFile", "multiSelections"], filters: [{ name: "Documents", extensions: DOCUMENT_EXTENSIONS }] }
    : { title: "Use a GGUF model", properties: ["openFile"], filters: [{ name: "GGUF models", extensions: ["gguf"] }] };
}

/** Shows the dialog; resolves to the chosen absolute paths, `[]` when cancelled. */
export async function pickFiles(dialog: DialogLike, kind: FileDialogKind): Promise<string[]> {
  const result = await dialog.showOpenDialog(fileDialogOptions(kind));
  return result.canceled ? [] : result.filePaths;
}

/** What a corpus (and the server) tells the parsers: the languages its scans are read in, and with what. */
import type { CorpusRecord } from "../../store/corpus-store.js";
import { DEFAULT_PARSE_SETTINGS, type ParseSettings } from "./types.js";

/** The server's part: its data folder (the built-in OCR engine's language data) and the engine wanted. */
export interface OcrServerSettings {
  dataDir?: string;
  engine?: "auto" | "builtin";
}

export function parseSettingsOf(corpus: Pick<CorpusRecord, "ocrLanguages">, server: OcrServerSettings = {}): ParseSettings {
  return {
    ...DEFAULT_PARSE_SETTINGS,
    ...(corpus.ocrLanguages && corpus.ocrLanguages.length > 0 ? { ocrLanguages: corpus.ocrLanguages } : {}),
    ...(server.dataDir ? { dataDir: server.dataDir } : {}),
    ...(server.engine ? { ocrEngine: server.engine } : {}),
  };
}

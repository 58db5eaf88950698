/** What a corpus tells the parsers: the languages its scans are read in. */
import type { CorpusRecord } from "../../store/corpus-store.js";
import { DEFAULT_PARSE_SETTINGS, type ParseSettings } from "./types.js";

export function parseSettingsOf(corpus: Pick<CorpusRecord, "id">): ParseSettings {
  void corpus;
  return DEFAULT_PARSE_SETTINGS;
}

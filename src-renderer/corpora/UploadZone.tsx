/**
 * Drop files here or pick them (a plain file input, which the desktop app supports too).
 * Says what is accepted, grouped as people think of their files, and how scans are read.
 */
import { Upload } from "lucide-react";
import { useId, useRef, useState, type DragEvent } from "react";
import { useI18n } from "../i18n/i18n.js";
import { ACCEPT_ATTRIBUTE, extensionsOf, FORMAT_GROUPS, type FormatGroup } from "./accepted-formats.js";
import { useOcrStatus } from "./OcrLanguagesField.js";
import { languageList } from "./ocr-languages.js";
import { MAX_FILES } from "./upload-reducer.js";

export function UploadZone({ onFiles, disabled = false, ocrLanguages = [] }: { onFiles: (files: File[]) => void; disabled?: boolean; ocrLanguages?: string[] }) {
  const { t, locale } = useI18n();
  const input = useRef<HTMLInputElement>(null);
  const hintId = useId();
  const [over, setOver] = useState(false);
  const ocr = useOcrStatus();
  const drop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    if (!disabled) onFiles(Array.from(e.dataTransfer.files));
  };
  const note: Record<FormatGroup, { text: string; warn?: boolean } | null> = {
    documents: null,
    sheets: null,
    email: { text: t("formats.emailNote") },
    scans:
      ocr.data && !ocr.data.available
        ? { text: t("formats.scansUnavailable"), warn: true }
        : { text: ocrLanguages.length > 0 ? t("formats.scansNote", { languages: languageList(ocrLanguages, locale) }) : t("formats.scansNoteDefault") },
  };
  return (
    <div
      className={over ? "dropzone over" : "dropzone"}
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={drop}
    >
      <Upload aria-hidden="true" size={22} className="dropzone-icon" />
      <div className="dropzone-text" id={hintId}>
        <p className="dropzone-title">{t("upload.drop")}</p>
        <p className="field-hint">{t("upload.hint", { max: MAX_FILES })}</p>
        <dl className="format-groups" aria-label={t("formats.title")}>
          {FORMAT_GROUPS.map(({ group, label }) => (
            <div key={group} className="format-group">
              <dt>{t(label)}</dt>
              <dd>
                <span className="format-exts">{extensionsOf(group).join(" · ")}</span>
                {note[group] && <span className={note[group].warn ? "format-note warn" : "format-note"}> — {note[group].text}</span>}
              </dd>
            </div>
          ))}
        </dl>
        <p className="field-hint">{t("formats.legacyNote")}</p>
      </div>
      <button type="button" className="btn" onClick={() => input.current?.click()} disabled={disabled} aria-describedby={hintId}>
        {t("upload.choose")}
      </button>
      <input
        ref={input}
        type="file"
        multiple
        accept={ACCEPT_ATTRIBUTE}
        className="sr-only"
        tabIndex={-1}
        aria-hidden="true"
        data-testid="file-input"
        onChange={(e) => {
          const files = Array.from(e.target.files ?? []);
          e.target.value = "";
          onFiles(files);
        }}
      />
    </div>
  );
}

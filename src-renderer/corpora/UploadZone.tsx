/** Drop files here or pick them (a plain file input, which the desktop app supports too). */
import { Upload } from "lucide-react";
import { useId, useRef, useState, type DragEvent } from "react";
import { useI18n } from "../i18n/i18n.js";
import { MAX_FILES } from "./upload-reducer.js";

export const ACCEPTED_TYPES = ".pdf,.docx,.md,.markdown,.txt,.html,.htm,application/pdf,text/plain,text/markdown,text/html,application/vnd.openxmlformats-officedocument.wordprocessingml.document";

export function UploadZone({ onFiles, disabled = false }: { onFiles: (files: File[]) => void; disabled?: boolean }) {
  const { t } = useI18n();
  const input = useRef<HTMLInputElement>(null);
  const hintId = useId();
  const [over, setOver] = useState(false);
  const drop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    if (!disabled) onFiles(Array.from(e.dataTransfer.files));
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
      <div className="dropzone-text">
        <p className="dropzone-title">{t("upload.drop")}</p>
        <p className="field-hint" id={hintId}>
          {t("upload.hint", { max: MAX_FILES })}
        </p>
      </div>
      <button type="button" className="btn" onClick={() => input.current?.click()} disabled={disabled} aria-describedby={hintId}>
        {t("upload.choose")}
      </button>
      <input
        ref={input}
        type="file"
        multiple
        accept={ACCEPTED_TYPES}
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

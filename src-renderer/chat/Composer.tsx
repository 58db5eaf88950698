/** Where the question is written: Enter sends, Shift+Enter adds a line, Stop aborts the answer. */
import { ArrowUp, Square } from "lucide-react";
import { useId, useState, type FormEvent, type KeyboardEvent } from "react";
import { useI18n } from "../i18n/i18n.js";

export interface ComposerProps {
  streaming: boolean;
  disabled: boolean;
  grounded: boolean;
  onSend: (text: string) => void;
  onStop: () => void;
}

export function Composer({ streaming, disabled, grounded, onSend, onStop }: ComposerProps) {
  const { t } = useI18n();
  const id = useId();
  const [text, setText] = useState("");
  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    if (streaming || disabled || !text.trim()) return;
    onSend(text);
    setText("");
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      submit();
    }
  };
  return (
    <form className="composer" onSubmit={submit}>
      <label htmlFor={id} className="sr-only">
        {grounded ? t("composer.labelGrounded") : t("composer.label")}
      </label>
      <textarea
        id={id}
        className="composer-input"
        rows={2}
        value={text}
        disabled={disabled}
        placeholder={grounded ? t("composer.placeholderGrounded") : t("composer.placeholder")}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKey}
        aria-describedby={`${id}-hint`}
      />
      <div className="composer-side">
        {streaming ? (
          <button type="button" className="btn btn-primary composer-btn" onClick={onStop}>
            <Square aria-hidden="true" size={14} fill="currentColor" /> {t("composer.stop")}
          </button>
        ) : (
          <button type="submit" className="btn btn-primary composer-btn" disabled={disabled || !text.trim()}>
            <ArrowUp aria-hidden="true" size={16} /> {t("composer.send")}
          </button>
        )}
      </div>
      <p id={`${id}-hint`} className="composer-hint">
        {t("composer.hint")}
      </p>
    </form>
  );
}

/** Copies text to the clipboard and says so (to screen readers too). */
import { Check, Copy } from "lucide-react";
import { useState } from "react";
import { useI18n } from "../i18n/i18n.js";

/** `showLabel`: the button reads `label` (not just "Copy") while idle. */
export function CopyButton({ text, label, className = "btn btn-small", showLabel = false }: { text: string; label?: string; className?: string; showLabel?: boolean }) {
  const { t } = useI18n();
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      setState("failed");
    }
    setTimeout(() => setState("idle"), 2000);
  };
  return (
    <button type="button" className={className} onClick={() => void copy()} aria-label={label ?? t("common.copy")}>
      {state === "copied" ? <Check aria-hidden="true" size={14} /> : <Copy aria-hidden="true" size={14} />}
      <span aria-live="polite">{state === "copied" ? t("common.copied") : state === "failed" ? t("common.copyFailed") : showLabel && label ? label : t("common.copy")}</span>
    </button>
  );
}

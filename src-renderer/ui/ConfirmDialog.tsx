/** Asks before something that cannot be undone; the safe choice has the focus. */
import { AlertDialog } from "radix-ui";
import { useState, type ReactNode } from "react";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "./ErrorNotice.js";

export interface ConfirmDialogProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  /** Runs the action; the dialog stays open showing the error if it fails. */
  onConfirm: () => Promise<unknown>;
  /** Where focus goes on close (default: back to what opened it); call `event.preventDefault()` to move it yourself. */
  onCloseAutoFocus?: (event: Event) => void;
}

export function ConfirmDialog({ open, onOpenChange, title, children, confirmLabel, onConfirm, onCloseAutoFocus }: ConfirmDialogProps) {
  const { t } = useI18n();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const change = (next: boolean) => {
    if (!next) setError(null);
    onOpenChange(next);
  };
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      onOpenChange(false);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <AlertDialog.Root open={open} onOpenChange={change}>
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="overlay" />
        <AlertDialog.Content className="dialog" onCloseAutoFocus={onCloseAutoFocus}>
          <AlertDialog.Title className="dialog-title">{title}</AlertDialog.Title>
          <AlertDialog.Description asChild>
            <div className="dialog-desc">{children}</div>
          </AlertDialog.Description>
          {error !== null && <ErrorNotice error={error} compact />}
          <div className="dialog-actions">
            <AlertDialog.Cancel className="btn">{t("common.cancel")}</AlertDialog.Cancel>
            <button type="button" className="btn btn-danger" disabled={busy} onClick={() => void confirm()}>
              {busy ? t("common.working") : confirmLabel}
            </button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}

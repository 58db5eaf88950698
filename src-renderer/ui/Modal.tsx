/** A dialog (Radix): focus moves in and returns, Escape closes, the title labels it. */
import { Dialog } from "radix-ui";
import { X } from "lucide-react";
import type { ReactNode } from "react";
import { useI18n } from "../i18n/i18n.js";

export interface ModalProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description?: ReactNode;
  children: ReactNode;
  wide?: boolean;
  /** Extra classes on the dialog (its width, its layout). */
  className?: string;
  /** Where focus goes on close (default: back to what had it before); call `event.preventDefault()` to move it yourself. */
  onCloseAutoFocus?: (event: Event) => void;
}

export function Modal({ open, onOpenChange, title, description, children, wide = false, className, onCloseAutoFocus }: ModalProps) {
  const { t } = useI18n();
  return (
    <Dialog.Root open={open} onOpenChange={onOpenChange}>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className={[wide ? "dialog wide" : "dialog", className].filter(Boolean).join(" ")} aria-describedby={description ? undefined : undefined} onCloseAutoFocus={onCloseAutoFocus}>
          <div className="dialog-head">
            <Dialog.Title className="dialog-title">{title}</Dialog.Title>
            <Dialog.Close className="icon-btn" aria-label={t("common.close")}>
              <X aria-hidden="true" size={18} />
            </Dialog.Close>
          </div>
          {description ? <Dialog.Description className="dialog-desc">{description}</Dialog.Description> : <Dialog.Description className="sr-only">{title}</Dialog.Description>}
          {children}
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

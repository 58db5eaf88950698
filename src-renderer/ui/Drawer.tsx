/** A side panel (Radix dialog): focus moves in and returns, Escape closes, the title labels it. */
import { Dialog } from "radix-ui";
import { X } from "lucide-react";
import type { ReactNode } from "react";
import { useI18n } from "../i18n/i18n.js";

export interface DrawerProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  /** A line under the title (e.g. the time of an entry). */
  subtitle?: ReactNode;
  children: ReactNode;
}

export function Drawer({ open, onOpenChange, title, subtitle, children }: DrawerProps) {
  const { t } = useI18n();
  return (
    <Dialog.Root open={open} onOpenChange={onOpenChange}>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay drawer-overlay" />
        <Dialog.Content className="drawer">
          <div className="drawer-head">
            <div className="drawer-titles">
              <Dialog.Title className="dialog-title">{title}</Dialog.Title>
              {subtitle ? <Dialog.Description className="drawer-sub">{subtitle}</Dialog.Description> : <Dialog.Description className="sr-only">{title}</Dialog.Description>}
            </div>
            <Dialog.Close className="icon-btn" aria-label={t("common.close")}>
              <X aria-hidden="true" size={18} />
            </Dialog.Close>
          </div>
          <div className="drawer-body">{children}</div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

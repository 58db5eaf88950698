/**
 * Radix dialogs give focus back to their own `Dialog.Trigger` on close; a dialog opened by an
 * ordinary button (its state kept by the page) gives it back to that button with this: pass
 * the result as the Modal's `onCloseAutoFocus`.
 */
import { useCallback, useLayoutEffect, useRef } from "react";

export function useReturnFocus(open: boolean): (event: Event) => void {
  const opener = useRef<HTMLElement | null>(null);
  // A layout effect runs before the dialog's focus trap moves focus in (a passive effect).
  useLayoutEffect(() => {
    if (open) opener.current = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
  }, [open]);
  return useCallback((event: Event) => {
    const element = opener.current;
    if (element?.isConnected) {
      event.preventDefault();
      element.focus();
    }
  }, []);
}

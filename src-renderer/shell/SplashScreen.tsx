/** Shown while the workbench finds out who is signed in. */
import { storedLocale, translate } from "../i18n/i18n.js";

export function SplashScreen() {
  return (
    <div className="splash" role="status" aria-live="polite">
      <span className="brand-mark" aria-hidden="true">P</span>
      <span>{translate(storedLocale(), "common.connecting")}</span>
    </div>
  );
}

/** What a browser without a session sees: how to get the sign-in link, and why sign-in failed. */
import { KeyRound, RefreshCw, TriangleAlert } from "lucide-react";
import { useI18n } from "../i18n/i18n.js";
import { LanguageSwitch } from "../shell/LanguageSwitch.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import "./SignInScreen.css";

export interface SignInScreenProps {
  reason: "signed-out" | "unreachable";
  desktop: boolean;
  error: unknown;
  onRetry: () => void;
}

export function SignInScreen({ reason, desktop, error, onRetry }: SignInScreenProps) {
  const { t } = useI18n();
  return (
    <main className="signin" aria-labelledby="signin-title">
      <div className="signin-card">
        <div className="signin-brand">
          <span className="brand-mark" aria-hidden="true">P</span> Pustaka
        </div>
        {reason === "unreachable" ? (
          <>
            <h1 id="signin-title">
              <TriangleAlert aria-hidden="true" className="signin-icon warn" /> {t("signin.unreachableTitle")}
            </h1>
            <p>{t("signin.unreachableBody")}</p>
          </>
        ) : (
          <>
            <h1 id="signin-title">
              <KeyRound aria-hidden="true" className="signin-icon" /> {desktop ? t("signin.desktopTitle") : t("signin.title")}
            </h1>
            {desktop ? (
              <p>{t("signin.desktopBody")}</p>
            ) : (
              <>
                <p>{t("signin.body")}</p>
                <ol className="signin-steps">
                  <li>{t("signin.step1")}</li>
                  <li>
                    {t("signin.step2")} <code>http://127.0.0.1:7780/#signin=psi-…</code>
                  </li>
                  <li>{t("signin.step3")}</li>
                </ol>
                <p className="muted">{t("signin.linkOnce")}</p>
              </>
            )}
          </>
        )}
        {error !== null && error !== undefined && <ErrorNotice error={error} />}
        <div className="signin-actions">
          <button type="button" className="btn" onClick={onRetry}>
            <RefreshCw aria-hidden="true" size={16} /> {t("common.retry")}
          </button>
          <LanguageSwitch />
        </div>
      </div>
    </main>
  );
}

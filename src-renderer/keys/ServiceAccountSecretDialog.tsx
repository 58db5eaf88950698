/** A service account's client id and new secret, shown this once, with the token request to paste. */
import { TriangleAlert } from "lucide-react";
import { useApi } from "../api/api-context.js";
import type { CreatedServiceAccount } from "../api/contract.js";
import { useI18n } from "../i18n/i18n.js";
import { CopyButton } from "../ui/CopyButton.js";
import { Modal } from "../ui/Modal.js";
import { tokenCurl } from "./service-account-snippet.js";

export interface ShownSecret {
  account: CreatedServiceAccount;
  /** Created now, or a rotated secret. */
  reason: "created" | "rotated";
}

export function ServiceAccountSecretDialog({ shown, onClose }: { shown: ShownSecret | null; onClose: () => void }) {
  const { t } = useI18n();
  const client = useApi();
  const account = shown?.account;
  const secret = account?.client_secret ?? null;
  const curl = account && secret ? tokenCurl(client.apiBase, account.client_id, secret) : "";
  const title = shown ? t(shown.reason === "created" ? "sa.createdTitle" : "sa.rotatedTitle", { name: shown.account.name }) : "";
  return (
    <Modal open={shown !== null} onOpenChange={(open) => !open && onClose()} title={title} wide>
      {account && (
        <>
          {secret && (
            <p className="notice notice-info compact secret-warning">
              <TriangleAlert aria-hidden="true" size={16} /> {t("sa.secretOnce")}
            </p>
          )}
          <div className="field">
            <span className="field-label">{t("sa.clientId")}</span>
            <div className="secret-box">
              <code className="secret-value">{account.client_id}</code>
              <CopyButton text={account.client_id} label={t("sa.copyId")} className="btn" />
            </div>
          </div>
          {secret ? (
            <>
              <div className="field">
                <span className="field-label">{t("sa.clientSecret")}</span>
                <div className="secret-box">
                  <code className="secret-value" aria-label={t("sa.secretLabel")}>
                    {secret}
                  </code>
                  <CopyButton text={secret} label={t("sa.copySecret")} className="btn" />
                </div>
              </div>
              <div className="field">
                <div className="token-head">
                  <span className="field-label">{t("sa.tokenHow")}</span>
                  <CopyButton text={curl} label={t("sa.copyCurl")} />
                </div>
                <pre className="code-block token-snippet">{curl}</pre>
                <p className="field-hint">{t("sa.tokenHint")}</p>
              </div>
            </>
          ) : (
            <p className="notice notice-info compact">{t("sa.keyOnly")}</p>
          )}
          <div className="dialog-actions">
            <button type="button" className="btn btn-primary" onClick={onClose}>
              {t("secret.done")}
            </button>
          </div>
        </>
      )}
    </Modal>
  );
}

/** A new key's secret, shown this once, with a copy button. */
import { TriangleAlert } from "lucide-react";
import type { CreatedApiKey } from "../api/contract.js";
import { useI18n } from "../i18n/i18n.js";
import { CopyButton } from "../ui/CopyButton.js";
import { Modal } from "../ui/Modal.js";

export function SecretDialog({ created, onClose }: { created: CreatedApiKey | null; onClose: () => void }) {
  const { t } = useI18n();
  return (
    <Modal open={created !== null} onOpenChange={(open) => !open && onClose()} title={t("secret.title", { name: created?.name ?? "" })}>
      <p className="notice notice-info compact secret-warning">
        <TriangleAlert aria-hidden="true" size={16} /> {t("secret.once")}
      </p>
      <div className="secret-box">
        <code className="secret-value" aria-label={t("secret.label")}>
          {created?.secret}
        </code>
        <CopyButton text={created?.secret ?? ""} label={t("secret.copy")} className="btn" />
      </div>
      <div className="dialog-actions">
        <button type="button" className="btn btn-primary" onClick={onClose}>
          {t("secret.done")}
        </button>
      </div>
    </Modal>
  );
}

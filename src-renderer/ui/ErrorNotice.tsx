/** An error in words a person understands, with the server's message as detail and an optional retry. */
import { CircleAlert } from "lucide-react";
import { describeError } from "../i18n/describe-error.js";
import { useI18n } from "../i18n/i18n.js";

export function ErrorNotice({ error, onRetry, compact = false }: { error: unknown; onRetry?: () => void; compact?: boolean }) {
  const { t } = useI18n();
  const { title, detail, code } = describeError(t, error);
  return (
    <div className={compact ? "notice notice-error compact" : "notice notice-error"} role="alert">
      <CircleAlert aria-hidden="true" size={18} className="notice-icon" />
      <div className="notice-body">
        <p className="notice-title">{title}</p>
        {detail && detail !== title && (
          <p className="notice-detail">
            {detail}
            {code && <span className="notice-code"> ({code})</span>}
          </p>
        )}
      </div>
      {onRetry && (
        <button type="button" className="btn btn-small" onClick={onRetry}>
          {t("common.retry")}
        </button>
      )}
    </div>
  );
}

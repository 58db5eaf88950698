/** The audit signing key: its id, the public key to pin (copy or download), and the offline check command. */
import { useQuery } from "@tanstack/react-query";
import { Download } from "lucide-react";
import { useApi } from "../api/api-context.js";
import { getSigningKey } from "../api/audit-api.js";
import { useI18n } from "../i18n/i18n.js";
import { downloadText } from "../lib/format.js";
import { CopyButton } from "../ui/CopyButton.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";

export const VERIFY_COMMAND = "pustaka audit verify FILE --public-key key.pem";

export function SigningKeyCard() {
  const { t } = useI18n();
  const client = useApi();
  const key = useQuery({ queryKey: ["audit-signing-key"], queryFn: () => getSigningKey(client), staleTime: Infinity });
  return (
    <section className="card section signing-key" aria-labelledby="signing-key-title">
      <h2 id="signing-key-title">{t("audit.key.title")}</h2>
      <p className="field-hint">{t("audit.key.body")}</p>
      <div className="base-url">
        <code className="base-url-value">{VERIFY_COMMAND}</code>
        <CopyButton text={VERIFY_COMMAND} />
      </div>
      {key.isPending && <Skeleton rows={2} height={20} />}
      {key.isError && <ErrorNotice error={key.error} onRetry={() => void key.refetch()} compact />}
      {key.data && (
        <>
          <dl className="facts">
            <dt>{t("audit.key.id")}</dt>
            <dd className="mono">{key.data.key_id}</dd>
          </dl>
          <div className="row wrap">
            <CopyButton text={key.data.public_key_pem} label={t("audit.key.copy")} className="btn" showLabel />
            <button type="button" className="btn" onClick={() => downloadText("key.pem", key.data.public_key_pem, "application/x-pem-file")}>
              <Download aria-hidden="true" size={14} /> {t("audit.key.download")}
            </button>
          </div>
          <details className="pem">
            <summary>{t("audit.key.show")}</summary>
            <pre className="code-block">{key.data.public_key_pem.trim()}</pre>
          </details>
        </>
      )}
    </section>
  );
}

/** This instance's own recipient key, to hand to people who will send it a bundle, with a copy button. */
import { useQuery } from "@tanstack/react-query";
import { KeyRound } from "lucide-react";
import { useId } from "react";
import { useApi } from "../api/api-context.js";
import { getRecipient } from "../api/bundles-api.js";
import { useI18n } from "../i18n/i18n.js";
import { CopyButton } from "../ui/CopyButton.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";

export function RecipientKeyCard() {
  const { t } = useI18n();
  const client = useApi();
  const id = useId();
  const recipient = useQuery({ queryKey: ["bundle-recipient"], queryFn: ({ signal }) => getRecipient(client, signal), staleTime: Infinity });
  return (
    <section className="bundle-mine" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`} className="bundle-mine-title">
        <KeyRound aria-hidden="true" size={15} /> {t("bundle.mine.title")}
      </h3>
      <p className="field-hint">{t("bundle.mine.body")}</p>
      {recipient.isPending && <Skeleton rows={1} height={34} />}
      {recipient.isError && <ErrorNotice error={recipient.error} compact onRetry={() => void recipient.refetch()} />}
      {recipient.data && (
        <>
          <div className="bundle-keybox">
            <code className="bundle-keyvalue" id={`${id}-key`} aria-label={t("bundle.mine.label")}>
              {recipient.data.recipient}
            </code>
            <CopyButton text={recipient.data.recipient} label={t("bundle.mine.copy")} className="btn" />
          </div>
          <p className="field-hint">
            {t("bundle.mine.signer")} <code className="mono">{recipient.data.signer.key_id}</code>
          </p>
        </>
      )}
    </section>
  );
}

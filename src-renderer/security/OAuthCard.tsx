/**
 * The OAuth 2.0 issuer for service accounts: its URL, the published token signing keys
 * (the newest signs, older ones only verify until their tokens expire), the token lifetime,
 * and rotation of the signing key after a confirmation.
 */
import { useQueryClient } from "@tanstack/react-query";
import { CircleCheck, KeyRound, RotateCw } from "lucide-react";
import { useState } from "react";
import { useApi } from "../api/api-context.js";
import type { SecurityStatus } from "../api/contract.js";
import { rotateTokenSigningKey } from "../api/security-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ConfirmDialog } from "../ui/ConfirmDialog.js";
import { CopyButton } from "../ui/CopyButton.js";
import { StatusBadge } from "../ui/StatusBadge.js";
import { SecurityCard } from "./SecurityCard.js";

export function OAuthCard({ oauth }: { oauth: SecurityStatus["oauth"] }) {
  const { t } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const [rotatedKid, setRotatedKid] = useState<string | null>(null);
  const ttl = oauth.token_ttl_seconds % 60 === 0 ? t("security.oauth.minutes", { n: oauth.token_ttl_seconds / 60 }) : t("security.oauth.seconds", { n: oauth.token_ttl_seconds });
  const rotate = async () => {
    const rotated = await rotateTokenSigningKey(client);
    await queryClient.invalidateQueries({ queryKey: ["security"] });
    setRotatedKid(rotated.kid);
  };
  return (
    <SecurityCard id="sec-oauth" icon={<KeyRound size={18} />} title={t("security.oauth.title")}>
      <p className="field-hint">{t("security.oauth.body")}</p>
      <dl className="facts">
        <dt>{t("security.oauth.issuer")}</dt>
        <dd className="issuer">
          <span className="mono">{oauth.issuer}</span>
          <CopyButton text={oauth.issuer} />
        </dd>
        <dt>{t("security.oauth.keys")}</dt>
        <dd>
          {oauth.signing_key_ids.length === 0 ? (
            "—"
          ) : (
            <ul className="kid-list">
              {oauth.signing_key_ids.map((kid, i) => (
                <li key={kid}>
                  <span className="mono kid">{kid}</span>
                  {/* The server lists the newest first: it signs, the others only verify. */}
                  <StatusBadge tone={i === 0 ? "success" : "neutral"}>{t(i === 0 ? "security.oauth.signing" : "security.oauth.verifyOnly")}</StatusBadge>
                </li>
              ))}
            </ul>
          )}
        </dd>
        <dt>{t("security.oauth.ttl")}</dt>
        <dd>{ttl}</dd>
      </dl>
      <div role="status" className="security-live">
        {rotatedKid && (
          <div className="notice notice-success">
            <CircleCheck aria-hidden="true" size={18} className="notice-icon" />
            <div className="notice-body">
              <p className="notice-title">{t("security.oauth.rotatedTitle")}</p>
              <p className="notice-detail">
                {t("security.oauth.rotated")} <span className="mono rotated-kid">{rotatedKid}</span>
              </p>
            </div>
          </div>
        )}
      </div>
      <div className="security-actions">
        <button type="button" className="btn btn-small" onClick={() => setConfirming(true)}>
          <RotateCw aria-hidden="true" size={14} /> {t("security.oauth.rotate")}
        </button>
      </div>
      <ConfirmDialog open={confirming} onOpenChange={setConfirming} title={t("security.oauth.rotateTitle")} confirmLabel={t("security.oauth.rotateConfirm")} onConfirm={rotate}>
        <p>{t("security.oauth.rotateBody", { ttl })}</p>
        <p>{t("security.oauth.rotateClients")}</p>
      </ConfirmDialog>
    </SecurityCard>
  );
}

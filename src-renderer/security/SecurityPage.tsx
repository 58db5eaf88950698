/**
 * Security: the key provider protecting the data (with a warning for the local key file),
 * the audit signing key, the OAuth issuer for service accounts (with signing key rotation),
 * how the server is reachable, and the Ollama listener (open, move, close). Needs the
 * `workspaces.manage` scope.
 */
import { useQuery } from "@tanstack/react-query";
import { Cpu, Network, ScrollText, TriangleAlert } from "lucide-react";
import { useApi } from "../api/api-context.js";
import type { SecurityStatus } from "../api/contract.js";
import { getSecurityStatus } from "../api/security-api.js";
import { useAuth } from "../auth/principal-context.js";
import { useI18n, type MessageKey } from "../i18n/i18n.js";
import { routeHref } from "../lib/route.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { isScopeRefusal, ScopeRequired } from "../ui/ScopeRequired.js";
import { Skeleton } from "../ui/Skeleton.js";
import { StatusBadge } from "../ui/StatusBadge.js";
import { OAuthCard } from "./OAuthCard.js";
import { OllamaListenerCard } from "./OllamaListenerCard.js";
import { SecurityCard } from "./SecurityCard.js";
import "./security.css";

const KNOWN_PROVIDERS = ["local-file", "pkcs11", "safe-storage"];

export function SecurityPage() {
  const { t } = useI18n();
  const { principal } = useAuth();
  if (!principal.scopes.includes("workspaces.manage")) return <ScopeRequired page={t("security.title")} scope="workspaces.manage" />;
  return <SecurityStatusView />;
}

function SecurityStatusView() {
  const { t } = useI18n();
  const client = useApi();
  const status = useQuery({ queryKey: ["security"], queryFn: ({ signal }) => getSecurityStatus(client, signal) });
  if (status.isError && isScopeRefusal(status.error)) return <ScopeRequired page={t("security.title")} scope="workspaces.manage" error={status.error} />;
  return (
    <div className="page-pad security-page">
      <header className="page-head">
        <div className="page-titles">
          <h1>{t("security.title")}</h1>
          <p className="page-sub">{t("security.subtitle")}</p>
        </div>
      </header>
      {status.isPending && (
        <div className="security-grid" aria-busy="true">
          {[0, 1, 2, 3].map((i) => (
            <div key={i} className="card">
              <Skeleton rows={4} height={18} />
            </div>
          ))}
        </div>
      )}
      {status.isError && <ErrorNotice error={status.error} onRetry={() => void status.refetch()} />}
      {status.data && <SecurityCards status={status.data} />}
    </div>
  );
}

function SecurityCards({ status }: { status: SecurityStatus }) {
  const { t, number } = useI18n();
  const { key_provider: provider, audit, oauth, transport } = status;
  const providerName = KNOWN_PROVIDERS.includes(provider.kind) ? t(`security.provider.kind.${provider.kind}` as MessageKey) : provider.kind;
  const exposed = !transport.tls && !transport.loopback_only;
  return (
    <div className="security-grid">
      <SecurityCard id="sec-provider" icon={<Cpu size={18} />} title={t("security.provider.title")}>
        <div className="security-lead">
          <span className="security-value">{providerName}</span>
          <StatusBadge tone={provider.hardware_backed ? "success" : "warning"}>{provider.hardware_backed ? t("security.provider.hardware") : t("security.provider.software")}</StatusBadge>
        </div>
        <p className="field-hint">{t("security.provider.body")}</p>
        <dl className="facts">
          <dt>{t("security.provider.id")}</dt>
          <dd className="mono">{provider.id}</dd>
        </dl>
        {provider.kind === "local-file" && (
          <div className="notice notice-warning" role="note">
            <TriangleAlert aria-hidden="true" size={18} className="notice-icon" />
            <div className="notice-body">
              <p className="notice-title">{t("security.provider.localWarnTitle")}</p>
              <p className="notice-detail">{t("security.provider.localWarn")}</p>
            </div>
          </div>
        )}
      </SecurityCard>
      <SecurityCard id="sec-audit" icon={<ScrollText size={18} />} title={t("security.audit.title")}>
        <p className="field-hint">{t("security.audit.body")}</p>
        <dl className="facts">
          <dt>{t("security.audit.keyId")}</dt>
          <dd className="mono">{audit.signing_key_id}</dd>
          <dt>{t("security.audit.chains")}</dt>
          <dd>{number(audit.chains)}</dd>
          <dt>{t("security.audit.entries")}</dt>
          <dd>{number(audit.entries)}</dd>
        </dl>
        <div>
          <a className="btn btn-small" href={routeHref({ page: "audit" })}>
            {t("security.audit.open")}
          </a>
        </div>
      </SecurityCard>
      <OAuthCard oauth={oauth} />
      <SecurityCard id="sec-transport" icon={<Network size={18} />} title={t("security.transport.title")}>
        <dl className="facts">
          <dt>{t("security.transport.tls")}</dt>
          <dd>
            <StatusBadge tone={transport.tls ? "success" : transport.loopback_only ? "neutral" : "danger"}>{transport.tls ? t("security.transport.tlsOn") : t("security.transport.tlsOff")}</StatusBadge>
          </dd>
          <dt>{t("security.transport.host")}</dt>
          <dd className="mono">{transport.host}</dd>
          <dt>{t("security.transport.reach")}</dt>
          <dd>{transport.loopback_only ? t("security.transport.loopback") : t("security.transport.network")}</dd>
        </dl>
        {exposed && (
          <div className="notice notice-error" role="note">
            <TriangleAlert aria-hidden="true" size={18} className="notice-icon" />
            <p className="notice-body">{t("security.transport.exposedWarn")}</p>
          </div>
        )}
      </SecurityCard>
      <OllamaListenerCard />
    </div>
  );
}

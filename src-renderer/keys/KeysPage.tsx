/**
 * Keys and connection: the local base URL, this minute's rate-limit usage, the workspace's
 * API keys (with their tiers) and service accounts, how agents and editors connect over MCP,
 * and client snippets.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Plus } from "lucide-react";
import { Tabs } from "radix-ui";
import { useMemo, useState } from "react";
import { useApi } from "../api/api-context.js";
import type { ApiKey, CreatedApiKey } from "../api/contract.js";
import { listKeys, setKeyTier } from "../api/keys-api.js";
import { useAuth } from "../auth/principal-context.js";
import { useI18n } from "../i18n/i18n.js";
import { defaultModel, useModels } from "../models/use-models.js";
import { CopyButton } from "../ui/CopyButton.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import { CreateKeyDialog } from "./CreateKeyDialog.js";
import { KeyTable } from "./KeyTable.js";
import { KEY_PLACEHOLDER, McpConnect } from "./McpConnect.js";
import { suggestedTiers } from "./suggested-tiers.js";
import { RateLimitUsage } from "./RateLimitUsage.js";
import { SecretDialog } from "./SecretDialog.js";
import { ServiceAccounts } from "./ServiceAccounts.js";
import { Snippets } from "./Snippets.js";
import { TierDialog } from "./TierDialog.js";
import "./keys.css";

export function KeysPage() {
  const { t } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const { principal } = useAuth();
  const models = useModels();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [tierOf, setTierOf] = useState<ApiKey | null>(null);
  const keys = useQuery({ queryKey: ["keys", principal.workspace_id], queryFn: () => listKeys(client, principal.workspace_id).then((p) => p.data) });
  const baseUrl = client.apiBase;
  const origin = baseUrl.replace(/\/v1$/, "");
  const model = defaultModel(models.data, "chat")?.id ?? "MODEL";
  const isAdmin = principal.scopes.includes("workspaces.manage");
  const knownTiers = useMemo(() => suggestedTiers(principal, (keys.data ?? []).map((k) => k.rate_limit_tier)), [keys.data, principal]);
  const saveTier = async (key: ApiKey, tier: string | null) => {
    await setKeyTier(client, principal.workspace_id, key.id, tier);
    void queryClient.invalidateQueries({ queryKey: ["keys", principal.workspace_id] });
    void queryClient.invalidateQueries({ queryKey: ["me", "usage"] });
  };

  return (
    <div className="page-pad keys-page">
      <header className="page-head">
        <div style={{ flex: 1 }}>
          <h1>{t("keys.title")}</h1>
          <p className="page-sub">{t("keys.subtitle")}</p>
        </div>
      </header>
      <section className="section card" aria-labelledby="conn-title">
          <h2 id="conn-title">{t("conn.title")}</h2>
          <p className="field-hint">{t("conn.hint")}</p>
          <div className="base-url">
            <code className="base-url-value">{baseUrl}</code>
            <CopyButton text={baseUrl} label={t("conn.copyUrl")} />
          </div>
      </section>
      <RateLimitUsage />
      <Tabs.Root defaultValue="keys" className="credential-tabs">
        <Tabs.List className="tabs-list" aria-label={t("keys.tabs")}>
          <Tabs.Trigger value="keys" className="tab">
            {t("keys.tab.keys")}
          </Tabs.Trigger>
          <Tabs.Trigger value="service-accounts" className="tab">
            {t("keys.tab.serviceAccounts")}
          </Tabs.Trigger>
        </Tabs.List>
        <Tabs.Content value="keys" className="tab-panel">
          <section className="section" aria-labelledby="keys-title">
            <div className="section-head">
              <h2 id="keys-title">{t("keys.listTitle")}</h2>
              <span className="spacer" />
              <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
                <Plus aria-hidden="true" size={16} /> {t("keys.new")}
              </button>
            </div>
            {keys.isPending && <Skeleton rows={3} height={32} />}
            {keys.isError && <ErrorNotice error={keys.error} onRetry={() => void keys.refetch()} />}
            {keys.data && <KeyTable keys={keys.data} workspaceId={principal.workspace_id} currentKeyId={principal.key_id} canChangeTier={isAdmin} onChangeTier={setTierOf} />}
          </section>
        </Tabs.Content>
        <Tabs.Content value="service-accounts" className="tab-panel">
          <ServiceAccounts workspaceId={principal.workspace_id} />
        </Tabs.Content>
      </Tabs.Root>
      {/* A new key's secret fills the snippets only while its dialog shows it: once closed, it is not shown again. */}
      <McpConnect origin={origin} fresh={created} onNewKey={() => setCreating(true)} keys={keys} currentKeyId={principal.key_id} />
      <Snippets baseUrl={baseUrl} model={model} apiKey={created?.secret ?? KEY_PLACEHOLDER} />
      <CreateKeyDialog open={creating} onOpenChange={setCreating} workspaceId={principal.workspace_id} onCreated={setCreated} />
      <SecretDialog created={created} onClose={() => setCreated(null)} />
      <TierDialog target={tierOf} onClose={() => setTierOf(null)} description={t("tier.body")} knownTiers={knownTiers} save={saveTier} />
    </div>
  );
}

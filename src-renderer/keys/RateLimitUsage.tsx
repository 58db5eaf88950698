/** The caller's rate limits and what is used of them this minute, for its key and its workspace (polls `GET /v1/me`). */
import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/api-context.js";
import { getMe } from "../api/auth-api.js";
import type { RateLimitState } from "../api/contract.js";
import { useAuth } from "../auth/principal-context.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Meter } from "../ui/Meter.js";
import { StatusBadge } from "../ui/StatusBadge.js";

/** How often the meters refresh, in milliseconds. */
export const USAGE_POLL_MS = 5000;

export function RateLimitUsage() {
  const { t } = useI18n();
  const client = useApi();
  const { principal } = useAuth();
  // Its own cache entry: a failed poll must not sign the workbench out (AuthGate watches ["me"]).
  const me = useQuery({ queryKey: ["me", "usage"], queryFn: ({ signal }) => getMe(client, signal), refetchInterval: USAGE_POLL_MS, placeholderData: principal });
  const limits = me.data?.rate_limits;
  const nowSeconds = me.dataUpdatedAt > 0 ? me.dataUpdatedAt / 1000 : null;
  return (
    <section className="card section usage" aria-labelledby="usage-title">
      <div className="section-head">
        <h2 id="usage-title">{t("usage.title")}</h2>
      </div>
      <p className="field-hint">{t("usage.hint")}</p>
      {me.isError && !limits && <ErrorNotice error={me.error} onRetry={() => void me.refetch()} compact />}
      {limits && (
        <div className="usage-grid">
          <UsageScope who={t("usage.key")} state={limits.key} nowSeconds={nowSeconds} />
          <UsageScope who={t("usage.workspace")} state={limits.workspace} nowSeconds={nowSeconds} />
        </div>
      )}
    </section>
  );
}

function UsageScope({ who, state, nowSeconds }: { who: string; state: RateLimitState; nowSeconds: number | null }) {
  const { t } = useI18n();
  const usedRequests = state.remaining_requests === null ? null : Math.max(0, state.requests_per_minute - state.remaining_requests);
  const usedTokens = state.remaining_tokens === null ? null : Math.max(0, state.tokens_per_minute - state.remaining_tokens);
  const busy = (usedRequests ?? 0) > 0 || (usedTokens ?? 0) > 0;
  // The window is one minute; a clock a little behind the server's must not show more.
  const resetsIn = nowSeconds === null ? null : Math.min(60, Math.max(0, Math.ceil(state.resets_at - nowSeconds)));
  return (
    <div className="usage-scope" role="group" aria-label={who}>
      <div className="usage-head">
        <h3>{who}</h3>
        <StatusBadge tone="neutral">{t("usage.tier", { tier: state.tier })}</StatusBadge>
        <span className="spacer" />
        <span className="usage-reset faint">{busy && resetsIn !== null && resetsIn > 0 ? t("usage.resetsIn", { n: resetsIn }) : t("usage.idle")}</span>
      </div>
      <div className="usage-lines">
        <UsageLine what={t("usage.requests")} who={who} limit={state.requests_per_minute} used={usedRequests} />
        <UsageLine what={t("usage.tokens")} who={who} limit={state.tokens_per_minute} used={usedTokens} />
      </div>
    </div>
  );
}

function UsageLine({ what, who, limit, used }: { what: string; who: string; limit: number; used: number | null }) {
  const { t, number } = useI18n();
  const unlimited = limit === 0 || used === null;
  return (
    <div className="usage-line">
      <div className="usage-line-text">
        <span>{what}</span>
        <span className="usage-figure">{unlimited ? t("usage.unlimited") : t("usage.of", { used: number(used), limit: number(limit) })}</span>
      </div>
      {!unlimited && <Meter used={used} max={limit} label={t("usage.meterLabel", { what, who })} />}
    </div>
  );
}

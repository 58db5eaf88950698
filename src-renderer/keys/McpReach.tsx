/**
 * Which keys can connect over MCP and what they reach: every corpus of their own workspace
 * (named once, since it is the same set for every key), asking only with `inference`.
 */
import { useQuery } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { useApi } from "../api/api-context.js";
import type { ApiKey, Corpus } from "../api/contract.js";
import { listCorpora } from "../api/corpora-api.js";
import { useAuth } from "../auth/principal-context.js";
import { countOf, useI18n } from "../i18n/i18n.js";
import { routeHref } from "../lib/route.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import { StatusBadge, type Tone } from "../ui/StatusBadge.js";
import { keysByAccess, type McpAccess } from "./mcp-reach.js";

export interface McpReachProps {
  /** The keys query of the page: loading, failed, or the workspace's keys. */
  keys: { data?: ApiKey[]; isPending: boolean; isError: boolean; error: unknown; refetch: () => unknown };
  currentKeyId: string;
}

/** Corpora named in the line; the rest are counted ("and 12 more"). */
const NAMED = 8;
const TONE: Record<McpAccess, Tone> = { ask: "success", search: "info", none: "neutral" };

export function McpReach({ keys, currentKeyId }: McpReachProps) {
  const { t } = useI18n();
  const client = useApi();
  const { principal } = useAuth();
  const [now] = useState(() => Date.now() / 1000);
  // The session lists the corpora with its own key: without rag.read it cannot, and says so.
  const canList = principal.scopes.includes("rag.read");
  // Same key and shape as the Corpora page, so both share one cache and its invalidations.
  const corpora = useQuery({ queryKey: ["corpora"], queryFn: () => listCorpora(client).then((page) => page.data), enabled: canList });
  const count = corpora.data?.length;
  const rows = keys.data ? keysByAccess(keys.data, now) : null;

  const reach = (access: McpAccess): ReactNode => {
    if (access === "none") return t("mcp.reach.needsRead");
    const all = count === undefined ? t("mcp.reach.allUnknown") : count === 0 ? t("mcp.reach.empty") : countOf(t, "mcp.reach.all", count);
    if (access === "ask") return all;
    return (
      <>
        {all}
        <span className="mcp-reach-note">{t("mcp.reach.cannotAsk")}</span>
      </>
    );
  };

  return (
    <div className="section mcp-reach">
      <h3 className="mcp-subtitle">{t("mcp.reachTitle")}</h3>
      <CorporaLine corpora={corpora.data} canList={canList} pending={canList && corpora.isPending} error={corpora.isError ? corpora.error : null} retry={() => void corpora.refetch()} />
      {keys.isPending && <Skeleton rows={2} height={28} />}
      {keys.isError && <ErrorNotice error={keys.error} onRetry={() => void keys.refetch()} compact />}
      {rows && rows.length === 0 && <p className="field-hint">{t("mcp.noActiveKeys")}</p>}
      {rows && rows.length > 0 && (
        <div className="table-wrap">
          <table className="table mcp-reach-table">
            <caption className="sr-only">{t("mcp.reachTitle")}</caption>
            <thead>
              <tr>
                <th scope="col">{t("mcp.col.key")}</th>
                <th scope="col">{t("mcp.col.access")}</th>
                <th scope="col">{t("mcp.col.reach")}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map(({ key, access }) => (
                <tr key={key.id}>
                  <th scope="row" className="mcp-key">
                    <span className="strong">{key.name}</span>
                    {key.id === currentKeyId && <span className="this-key"> · {t("keys.thisSession")}</span>}
                    <span className="mono key-prefix mcp-prefix">{key.prefix}…</span>
                  </th>
                  <td className="nowrap">
                    <StatusBadge tone={TONE[access]}>{t(`mcp.access.${access}`)}</StatusBadge>
                  </td>
                  <td className={access === "none" ? "muted" : undefined}>{reach(access)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/** "A key reaches every corpus of its own workspace and nothing else: A, B." and its states. */
function CorporaLine({ corpora, canList, pending, error, retry }: { corpora?: Corpus[]; canList: boolean; pending: boolean; error: unknown; retry: () => void }) {
  const { t } = useI18n();
  if (error) return <ErrorNotice error={error} onRetry={retry} compact />;
  return (
    <p className="field-hint mcp-corpora">
      {t("mcp.reach.rule")}{" "}
      {!canList ? (
        t("mcp.reach.cannotList")
      ) : pending ? (
        <span className="mcp-loading">{t("common.loading")}</span>
      ) : corpora && corpora.length > 0 ? (
        <>
          {t("mcp.reach.here")}{" "}
          {corpora.slice(0, NAMED).map((c, i, shown) => (
            <span key={c.id}>
              <span className="strong">{c.name}</span>
              {i < shown.length - 1 ? ", " : corpora.length > NAMED ? ` ${t("mcp.reach.more", { n: corpora.length - NAMED })}` : "."}
            </span>
          ))}
        </>
      ) : (
        <>
          {t("mcp.reach.none")} <a href={routeHref({ page: "corpora", corpusId: null })}>{t("mcp.reach.createCorpus")}</a>
        </>
      )}
    </p>
  );
}

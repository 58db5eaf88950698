/** Models that can be downloaded from their publishers, with a pull button each. */
import { useQuery } from "@tanstack/react-query";
import { Download } from "lucide-react";
import { isMissingEndpoint } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import type { ModelPull } from "../api/contract.js";
import { getCatalog } from "../api/models-api.js";
import { useI18n } from "../i18n/i18n.js";
import { formatBytes } from "../lib/format.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import { StatusBadge } from "../ui/StatusBadge.js";
import { ACTIVE_PULL } from "./use-pulls.js";
import { useStartPull } from "./use-start-pull.js";

export function CatalogSection({ pulls, pullsAvailable }: { pulls: ModelPull[]; pullsAvailable: boolean }) {
  const { t, number } = useI18n();
  const client = useApi();
  const catalog = useQuery({ queryKey: ["catalog"], queryFn: () => getCatalog(client).then((l) => l.data), retry: false });
  const start = useStartPull();
  const pulling = new Set(pulls.filter((p) => ACTIVE_PULL.has(p.status)).flatMap((p) => p.models));
  const missing = catalog.isError && isMissingEndpoint(catalog.error, ["model_not_found"]);

  return (
    <section id="catalog" className="section" aria-labelledby="catalog-title">
      <div className="section-head">
        <h2 id="catalog-title">{t("catalog.title")}</h2>
        <p>{t("catalog.subtitle")}</p>
      </div>
      {catalog.isPending && <Skeleton rows={3} height={60} />}
      {missing && <p className="notice notice-info compact">{t("catalog.unavailable")}</p>}
      {catalog.isError && !missing && <ErrorNotice error={catalog.error} onRetry={() => void catalog.refetch()} />}
      {start.isError && <ErrorNotice error={start.error} compact />}
      {catalog.data && (
        <ul className="catalog-grid">
          {catalog.data.map((m) => (
            <li key={m.id} className="catalog-card card">
              <div className="row">
                <h3 className="catalog-name">{m.name}</h3>
                <StatusBadge tone={m.type === "chat" ? "info" : "neutral"}>{t(`models.type.${m.type}`)}</StatusBadge>
              </div>
              <p className="catalog-desc">{m.description}</p>
              <p className="model-facts">
                {m.parameters} · {m.quantization} · {t("catalog.context", { n: number(m.context_length) })}
                {m.dimensions ? ` · ${t("models.dimensions", { n: m.dimensions })}` : ""}
                {m.bytes ? ` · ${formatBytes(m.bytes)}` : ""}
              </p>
              <p className="model-aliases">
                {m.languages.join(", ")} · {m.license}
                {m.aliases.length > 0 && ` · ${t("models.aliases", { list: m.aliases.join(", ") })}`}
              </p>
              <div className="catalog-actions">
                {m.installed ? (
                  <StatusBadge tone="success">{t("catalog.installed")}</StatusBadge>
                ) : (
                  <button type="button" className="btn btn-small" disabled={!pullsAvailable || pulling.has(m.id) || start.isPending} onClick={() => start.mutate({ model: m.id })} aria-label={t("catalog.pullOne", { name: m.name })}>
                    <Download aria-hidden="true" size={14} /> {pulling.has(m.id) ? t("catalog.pulling") : t("catalog.pull")}
                  </button>
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

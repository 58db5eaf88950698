/** Every installed model with its aliases and the facts of the file behind it. */
import { FolderOpen } from "lucide-react";
import { getBridge } from "../api/bridge.js";
import type { Health, Model } from "../api/contract.js";
import { useI18n } from "../i18n/i18n.js";
import { formatBytes } from "../lib/format.js";
import { StatusBadge } from "../ui/StatusBadge.js";

const baseName = (path: string) => path.split(/[\\/]/).pop() ?? path;
const dirName = (path: string) => path.slice(0, Math.max(0, path.length - baseName(path).length));

/** One row per canonical model; aliases listed with it. */
export function groupModels(models: readonly Model[]): { model: Model; aliases: string[]; isDefault: boolean }[] {
  const byRoot = new Map<string, { model: Model; aliases: string[]; isDefault: boolean }>();
  for (const m of models) {
    const entry = byRoot.get(m.root) ?? { model: m, aliases: [], isDefault: false };
    if (m.id === m.root) entry.model = m;
    else entry.aliases.push(m.id);
    entry.isDefault ||= m.is_default === true;
    byRoot.set(m.root, entry);
  }
  return [...byRoot.values()].sort((a, b) => a.model.type.localeCompare(b.model.type) || a.model.root.localeCompare(b.model.root));
}

export function ModelTable({ models, health }: { models: Model[]; health: Health | undefined }) {
  const { t, number } = useI18n();
  const bridge = getBridge();
  const loaded = new Set(health?.engine.loadedModels.map((m) => m.id) ?? []);
  return (
    <section className="section" aria-labelledby="installed-title">
      <h2 id="installed-title">{t("models.installed")}</h2>
      <div className="table-wrap">
        <table className="table models-table">
          <thead>
            <tr>
              <th scope="col">{t("models.col.model")}</th>
              <th scope="col">{t("models.col.type")}</th>
              <th scope="col">{t("models.col.backing")}</th>
              <th scope="col" className="num">{t("models.col.context")}</th>
              <th scope="col">{t("models.col.state")}</th>
            </tr>
          </thead>
          <tbody>
            {groupModels(models).map(({ model: m, aliases, isDefault }) => {
              const backing = m.backing;
              const isLoaded = loaded.has(m.root) || (backing.kind === "local" && loaded.has(backing.file));
              return (
                <tr key={m.root}>
                  <td>
                    <div className="model-name">
                      <span className="mono strong">{m.root}</span>
                      {isDefault && <StatusBadge tone="info">{t("models.default")}</StatusBadge>}
                    </div>
                    {aliases.length > 0 && <p className="model-aliases">{t("models.aliases", { list: aliases.join(", ") })}</p>}
                  </td>
                  <td>{t(`models.type.${m.type}`)}</td>
                  <td>
                    {backing.kind === "local" ? (
                      <>
                        <p className="model-facts">
                          {backing.architecture} · {backing.parameters}
                          {backing.quantization && ` · ${backing.quantization}`} · {formatBytes(backing.bytes)}
                          {m.type === "embedding" && m.dimensions ? ` · ${t("models.dimensions", { n: m.dimensions })}` : ""}
                        </p>
                        <p className="model-file mono" title={backing.file}>
                          <span className="model-file-name">{baseName(backing.file)}</span>
                          <span className="model-file-dir">{dirName(backing.file)}</span>
                          {bridge && (
                            <button type="button" className="icon-btn" aria-label={t("models.reveal")} onClick={() => void bridge.revealInFolder(backing.file)}>
                              <FolderOpen aria-hidden="true" size={14} />
                            </button>
                          )}
                        </p>
                      </>
                    ) : (
                      <>
                        <p className="model-facts">
                          {backing.upstreams.length > 1 ? t("models.remoteReplicas", { n: backing.upstreams.length }) : t("models.remote")}
                          {m.type === "embedding" && m.dimensions ? ` · ${t("models.dimensions", { n: m.dimensions })}` : ""}
                        </p>
                        <ul className="model-upstreams">
                          {backing.upstreams.map((u) => (
                            <li key={u.id} className="mono" title={u.last_error ?? undefined}>
                              <StatusBadge tone={u.health === "healthy" ? "success" : u.health === "unknown" ? "neutral" : "danger"}>{t(`models.upstream.${u.health}`)}</StatusBadge> {u.url ?? u.id} · {u.model}
                            </li>
                          ))}
                        </ul>
                      </>
                    )}
                  </td>
                  <td className="num">{m.context_length ? number(m.context_length) : "—"}</td>
                  <td>
                    {backing.kind === "remote" ? (
                      <StatusBadge tone={backing.upstreams.some((u) => u.health === "healthy") ? "success" : backing.upstreams.every((u) => u.health === "unknown") ? "neutral" : "danger"}>
                        {t("models.replicasHealthy", { n: backing.upstreams.filter((u) => u.health === "healthy").length, of: backing.upstreams.length })}
                      </StatusBadge>
                    ) : isLoaded ? (
                      <StatusBadge tone="success">{t("models.loaded")}</StatusBadge>
                    ) : (
                      <StatusBadge tone="neutral">{t("models.notLoaded")}</StatusBadge>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** The inference engine as /healthz reports it: GPU or CPU, threads, the llama.cpp build, loaded models. */
import { Binary, Cpu, Gauge } from "lucide-react";
import type { Health } from "../api/contract.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";

export function EngineCard({ health, error }: { health: Health | undefined; error: unknown }) {
  const { t } = useI18n();
  if (error) return <ErrorNotice error={error} compact />;
  if (!health) return null;
  const { engine } = health;
  return (
    <section className="engine card" aria-label={t("engine.title")}>
      <div className="engine-fact">
        <Cpu aria-hidden="true" size={18} />
        <div>
          <p className="engine-label">{t("engine.compute")}</p>
          <p className="engine-value">{engine.gpu === null ? t("engine.notStarted") : engine.gpu ? t("engine.gpu", { gpu: engine.gpu }) : t("engine.cpu")}</p>
        </div>
      </div>
      <div className="engine-fact">
        <Gauge aria-hidden="true" size={18} />
        <div>
          <p className="engine-label">{t("engine.threads")}</p>
          <p className="engine-value">{engine.threads > 0 ? engine.threads : t("engine.threadsAuto")}</p>
        </div>
      </div>
      <div className="engine-fact">
        <div>
          <p className="engine-label">{t("engine.loaded")}</p>
          <p className="engine-value">{engine.loadedModels.length === 0 ? t("engine.noneLoaded") : engine.loadedModels.map((m) => m.id).join(", ")}</p>
        </div>
      </div>
      <div className="engine-fact">
        <div>
          <p className="engine-label">{t("engine.version")}</p>
          <p className="engine-value mono">
            {health.version} · {engine.backend}
          </p>
        </div>
      </div>
      {engine.build && (
        // Last, beside the version: when the facts wrap, it starts the next row instead of
        // pushing the version there alone.
        <div className="engine-fact">
          <Binary aria-hidden="true" size={18} />
          <div>
            <p className="engine-label">{t("engine.build")}</p>
            <p className="engine-value">
              {engine.build.type === "local" ? t("engine.buildLocal") : t("engine.buildPrebuilt")}
              {engine.build.variant ? ` · ${t("engine.variant", { variant: engine.build.variant })}` : ""}
            </p>
            {/* The server's reason is English (log words): say so for screen readers in Malay. */}
            <p className="engine-note" lang="en">
              {engine.build.reason}
            </p>
          </div>
        </div>
      )}
    </section>
  );
}

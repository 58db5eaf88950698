/** No models at all: the three ways to get started, side by side. */
import { Download, HardDrive, Sparkles } from "lucide-react";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { RegisterFileForm } from "./RegisterFileForm.js";
import { useStartPull } from "./use-start-pull.js";

export function FirstRun({ pullsAvailable }: { pullsAvailable: boolean }) {
  const { t } = useI18n();
  const start = useStartPull();
  return (
    <section className="first-run" aria-labelledby="first-run-title">
      <h2 id="first-run-title">{t("firstRun.title")}</h2>
      <p className="muted">{t("firstRun.body")}</p>
      {start.isError && <ErrorNotice error={start.error} compact />}
      <div className="first-run-grid">
        <div className="card first-run-card featured">
          <Sparkles aria-hidden="true" size={22} className="first-run-icon" />
          <h3>{t("firstRun.starterTitle")}</h3>
          <p className="muted">{t("firstRun.starterBody")}</p>
          <button type="button" className="btn btn-primary" disabled={!pullsAvailable || start.isPending} onClick={() => start.mutate({ starter: true })}>
            {t("firstRun.starterButton")}
          </button>
        </div>
        <div className="card first-run-card">
          <Download aria-hidden="true" size={22} className="first-run-icon" />
          <h3>{t("firstRun.catalogTitle")}</h3>
          <p className="muted">{t("firstRun.catalogBody")}</p>
          <a className="btn" href="#catalog" onClick={(e) => {
            e.preventDefault();
            document.getElementById("catalog")?.scrollIntoView({ behavior: "smooth" });
          }}>
            {t("firstRun.catalogButton")}
          </a>
        </div>
        <div className="card first-run-card">
          <HardDrive aria-hidden="true" size={22} className="first-run-icon" />
          <RegisterFileForm prominent />
        </div>
      </div>
    </section>
  );
}

/** Models: what is installed and what really serves each name, the engine, team servers (admins), downloads, and ways to add models. */
import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/api-context.js";
import { getHealth } from "../api/models-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import { CatalogSection } from "./CatalogSection.js";
import { EngineCard } from "./EngineCard.js";
import { FirstRun } from "./FirstRun.js";
import { ModelTable } from "./ModelTable.js";
import { PullList } from "./PullList.js";
import { RegisterFileForm } from "./RegisterFileForm.js";
import { TeamServersSection } from "./TeamServersSection.js";
import { usePulls } from "./use-pulls.js";
import { useModels } from "./use-models.js";
import "./models.css";

export function ModelsPage() {
  const { t } = useI18n();
  const client = useApi();
  const models = useModels();
  const health = useQuery({ queryKey: ["health"], queryFn: () => getHealth(client), refetchInterval: 10_000 });
  const pulls = usePulls();
  const empty = models.data?.length === 0;

  return (
    <div className="page-pad models-page">
      <header className="page-head">
        <div style={{ flex: 1 }}>
          <h1>{t("models.title")}</h1>
          <p className="page-sub">{t("models.subtitle")}</p>
        </div>
      </header>
      {models.isError && <ErrorNotice error={models.error} onRetry={() => void models.refetch()} />}
      {empty && <FirstRun pullsAvailable={pulls.available} />}
      {pulls.data && pulls.data.length > 0 && <PullList pulls={pulls.data} />}
      {models.isPending && <Skeleton rows={4} height={36} />}
      {models.data && models.data.length > 0 && (
        <>
          <EngineCard health={health.data} error={health.error} />
          <ModelTable models={models.data} health={health.data} />
        </>
      )}
      <TeamServersSection />
      <CatalogSection pulls={pulls.data ?? []} pullsAvailable={pulls.available} />
      {!empty && <RegisterFileForm />}
    </div>
  );
}

/** Every corpus of the workspace with its status and counts. */
import { useQuery } from "@tanstack/react-query";
import { FileInput, Library, Plus } from "lucide-react";
import { useState } from "react";
import { useApi } from "../api/api-context.js";
import { listCorpora } from "../api/corpora-api.js";
import { useI18n } from "../i18n/i18n.js";
import { routeHref } from "../lib/route.js";
import { EmptyState } from "../ui/EmptyState.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import { StatusBadge } from "../ui/StatusBadge.js";
import { corpusLabel, corpusTone } from "./corpus-status.js";
import { CreateCorpusDialog } from "./CreateCorpusDialog.js";
import { DELETED_NOTICE_KEY } from "./DeleteCorpusDialog.js";
import { ImportBundleDialog } from "./ImportBundleDialog.js";

function takeDeletedNotice(): { name: string; expires: number } | null {
  const raw = sessionStorage.getItem(DELETED_NOTICE_KEY);
  sessionStorage.removeItem(DELETED_NOTICE_KEY);
  try {
    return raw ? (JSON.parse(raw) as { name: string; expires: number }) : null;
  } catch {
    return null;
  }
}

export function CorpusList() {
  const { t, number, dateTime, date } = useI18n();
  const client = useApi();
  const [creating, setCreating] = useState(false);
  const [importing, setImporting] = useState(false);
  const [deleted, setDeleted] = useState(takeDeletedNotice);
  const corpora = useQuery({
    queryKey: ["corpora"],
    queryFn: () => listCorpora(client).then((page) => page.data),
    refetchInterval: (query) => (query.state.data?.some((c) => c.status === "indexing") ? 4000 : false),
  });

  return (
    <div className="page-pad">
      <header className="page-head">
        <div style={{ flex: 1 }}>
          <h1>{t("corpora.title")}</h1>
          <p className="page-sub">{t("corpora.subtitle")}</p>
        </div>
        {corpora.data && corpora.data.length > 0 && (
          <>
            <button type="button" className="btn" onClick={() => setImporting(true)}>
              <FileInput aria-hidden="true" size={16} /> {t("corpora.import")}
            </button>
            <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
              <Plus aria-hidden="true" size={16} /> {t("corpora.new")}
            </button>
          </>
        )}
      </header>
      {deleted && (
        <div className="notice notice-info deleted-notice" role="status">
          <div className="notice-body">
            <p className="notice-title">{t("deleteCorpus.done", { name: deleted.name })}</p>
            <p className="notice-detail">{t("deleteCorpus.doneDetail", { date: date(deleted.expires) })}</p>
          </div>
          <button type="button" className="btn btn-small btn-ghost" onClick={() => setDeleted(null)}>
            {t("common.dismiss")}
          </button>
        </div>
      )}
      {corpora.isPending && <Skeleton rows={4} height={40} />}
      {corpora.isError && <ErrorNotice error={corpora.error} onRetry={() => void corpora.refetch()} />}
      {corpora.data?.length === 0 && (
        <EmptyState
          icon={Library}
          title={t("corpora.emptyTitle")}
          actions={
            <>
              <button type="button" className="btn btn-primary btn-large" onClick={() => setCreating(true)}>
                <Plus aria-hidden="true" size={16} /> {t("corpora.new")}
              </button>
              <button type="button" className="btn btn-large" onClick={() => setImporting(true)}>
                <FileInput aria-hidden="true" size={16} /> {t("corpora.import")}
              </button>
            </>
          }
        >
          <p>{t("corpora.emptyBody")}</p>
        </EmptyState>
      )}
      {corpora.data && corpora.data.length > 0 && (
        <div className="table-wrap">
          <table className="table">
            <caption className="sr-only">{t("corpora.title")}</caption>
            <thead>
              <tr>
                <th scope="col">{t("corpora.col.name")}</th>
                <th scope="col">{t("corpora.col.status")}</th>
                <th scope="col" className="num">{t("corpora.col.documents")}</th>
                <th scope="col" className="num">{t("corpora.col.chunks")}</th>
                <th scope="col">{t("corpora.col.embedding")}</th>
                <th scope="col">{t("corpora.col.updated")}</th>
              </tr>
            </thead>
            <tbody>
              {corpora.data.map((c) => (
                <tr key={c.id}>
                  <td>
                    <a className="row-link" href={routeHref({ page: "corpora", corpusId: c.id })}>
                      {c.name}
                    </a>
                  </td>
                  <td>
                    <StatusBadge tone={corpusTone[c.status]}>{t(corpusLabel[c.status])}</StatusBadge>
                    {c.document_counts.failed > 0 && <span className="count-failed">{t("corpora.failedCount", { n: c.document_counts.failed })}</span>}
                  </td>
                  <td className="num">
                    {number(c.document_counts.indexed)} / {number(c.document_counts.total)}
                  </td>
                  <td className="num">{number(c.chunk_count)}</td>
                  <td className="mono">{c.embedding_model}</td>
                  <td className="muted">{dateTime(c.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <CreateCorpusDialog open={creating} onOpenChange={setCreating} />
      <ImportBundleDialog open={importing} onOpenChange={setImporting} />
    </div>
  );
}

/** One corpus: facts, upload, live indexing, documents, deletion. */
import { useQuery } from "@tanstack/react-query";
import { ArrowLeft, Download, MessageSquare, ScanText, SlidersHorizontal, Trash2 } from "lucide-react";
import { useState } from "react";
import { ApiError } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import { getCorpus, listDocuments } from "../api/corpora-api.js";
import { useI18n } from "../i18n/i18n.js";
import { routeHref } from "../lib/route.js";
import { EmptyState } from "../ui/EmptyState.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Skeleton } from "../ui/Skeleton.js";
import { StatusBadge } from "../ui/StatusBadge.js";
import { corpusLabel, corpusTone } from "./corpus-status.js";
import { DeleteCorpusDialog } from "./DeleteCorpusDialog.js";
import { DocumentsTable } from "./DocumentsTable.js";
import { ExportBundleDialog } from "./ExportBundleDialog.js";
import { languageList } from "./ocr-languages.js";
import { OcrSettingsDialog } from "./OcrSettingsDialog.js";
import { SearchSettingsDialog, searchSummary } from "./SearchSettingsDialog.js";
import { UploadList } from "./UploadList.js";
import { UploadZone } from "./UploadZone.js";
import { useCorpusEvents } from "./use-corpus-events.js";
import { useUploads } from "./use-uploads.js";
import { FileQuestion } from "lucide-react";

/** The chat page reads this to preselect the corpus the user came from. */
export const ASK_CORPUS_KEY = "pustaka.chat.corpus";

export function CorpusDetail({ corpusId }: { corpusId: string }) {
  const { t, number, dateTime, locale } = useI18n();
  const client = useApi();
  const [deleting, setDeleting] = useState(false);
  const [tuning, setTuning] = useState(false);
  const [ocrOpen, setOcrOpen] = useState(false);
  const [exporting, setExporting] = useState(false);
  // "failed": only the documents that could not be indexed (the header's count opens it).
  const [show, setShow] = useState<"all" | "failed">("all");
  const uploads = useUploads(corpusId);
  const { connected } = useCorpusEvents(corpusId, uploads.onEvent);
  const corpus = useQuery({ queryKey: ["corpus", corpusId], queryFn: () => getCorpus(client, corpusId) });
  const documents = useQuery({
    queryKey: ["documents", corpusId, show],
    queryFn: () => listDocuments(client, corpusId, show === "failed" ? "failed" : undefined),
    refetchInterval: (query) => (!connected && query.state.data?.some((d) => d.status === "queued" || d.status === "processing") ? 4000 : false),
  });

  if (corpus.isPending) {
    return (
      <div className="page-pad">
        <Skeleton rows={6} height={28} />
      </div>
    );
  }
  if (corpus.isError) {
    const missing = corpus.error instanceof ApiError && corpus.error.status === 404;
    return (
      <div className="page-pad">
        {missing ? (
          <EmptyState icon={FileQuestion} title={t("corpus.notFound")} actions={<a className="btn" href={routeHref({ page: "corpora", corpusId: null })}>{t("corpus.back")}</a>} />
        ) : (
          <ErrorNotice error={corpus.error} onRetry={() => void corpus.refetch()} />
        )}
      </div>
    );
  }
  const c = corpus.data;
  const failed = c.document_counts.failed;
  const ask = () => {
    localStorage.setItem(ASK_CORPUS_KEY, c.id);
    window.location.hash = routeHref({ page: "chat", conversationId: null });
  };

  return (
    <div className="page-pad corpus-detail">
      <a className="back-link" href={routeHref({ page: "corpora", corpusId: null })}>
        <ArrowLeft aria-hidden="true" size={14} /> {t("corpus.back")}
      </a>
      <header className="page-head">
        <div className="corpus-title">
          <h1 className="row">
            <span className="truncate">{c.name}</span> <StatusBadge tone={corpusTone[c.status]}>{t(corpusLabel[c.status])}</StatusBadge>
            {failed > 0 && (
              <button type="button" className="failed-link" onClick={() => setShow("failed")} aria-controls="docs-title">
                <StatusBadge tone="danger">{t("corpora.failedCount", { n: number(failed) })}</StatusBadge>
              </button>
            )}
          </h1>
        </div>
        <p className="page-sub corpus-facts">
          {t("corpus.facts", { docs: number(c.document_counts.total), indexed: number(c.document_counts.indexed), chunks: number(c.chunk_count) })} · {t(`chunking.${c.chunking}`)} ·{" "}
          <span className="mono">{c.embedding_model}</span> ({c.dimensions}d) · {t("corpus.retentionShort", { days: c.retention_days })} · {t("corpus.search", { summary: searchSummary(t, c.search_defaults) })}
          {c.ocr_languages?.length > 0 && <> · {t("corpus.ocr", { languages: languageList(c.ocr_languages, locale) })}</>} · {t("corpus.created", { when: dateTime(c.created_at) })}
        </p>
        <div className="corpus-actions">
          <button type="button" className="btn" onClick={ask} disabled={c.status !== "ready"} title={c.status !== "ready" ? t("err.corpus_not_ready") : undefined}>
            <MessageSquare aria-hidden="true" size={16} /> {t("corpus.ask")}
          </button>
          <button type="button" className="btn" onClick={() => setTuning(true)}>
            <SlidersHorizontal aria-hidden="true" size={16} /> {t("corpus.searchSettings")}
          </button>
          <button type="button" className="btn" onClick={() => setOcrOpen(true)}>
            <ScanText aria-hidden="true" size={16} /> {t("corpus.ocrSettings")}
          </button>
          <button type="button" className="btn" onClick={() => setExporting(true)} disabled={c.status === "indexing"} title={c.status === "indexing" ? t("corpus.exportBusy") : undefined}>
            <Download aria-hidden="true" size={16} /> {t("corpus.export")}
          </button>
          <button type="button" className="btn" onClick={() => setDeleting(true)}>
            <Trash2 aria-hidden="true" size={16} /> {t("corpus.delete")}
          </button>
          {/* A disabled button cannot be focused to hear its title: the reason is on the page too. */}
          {c.status === "indexing" && <p className="corpus-action-note">{t("corpus.exportBusy")}</p>}
        </div>
      </header>
      <UploadZone onFiles={uploads.upload} ocrLanguages={c.ocr_languages} />
      <UploadList state={uploads.state} onClear={uploads.clearFinished} />
      <section className="section" aria-labelledby="docs-title">
        <div className="section-head">
          <h2 id="docs-title">{t("documents.title")}</h2>
          {(failed > 0 || show === "failed") && (
            <div className="segmented" role="group" aria-label={t("documents.show")}>
              <button type="button" aria-pressed={show === "all"} onClick={() => setShow("all")}>
                {t("documents.showAll", { n: number(c.document_counts.total) })}
              </button>
              <button type="button" aria-pressed={show === "failed"} onClick={() => setShow("failed")}>
                {t("documents.showFailed", { n: number(failed) })}
              </button>
            </div>
          )}
          <span className={connected ? "live-dot on" : "live-dot"} title={connected ? t("documents.live") : t("documents.notLive")}>
            <span className="sr-only">{connected ? t("documents.live") : t("documents.notLive")}</span>
          </span>
        </div>
        {documents.isPending && <Skeleton rows={4} height={32} />}
        {documents.isError && <ErrorNotice error={documents.error} onRetry={() => void documents.refetch()} />}
        {documents.data && show === "failed" && documents.data.length === 0 && <p className="muted">{t("documents.noneFailed")}</p>}
        {documents.data && !(show === "failed" && documents.data.length === 0) && <DocumentsTable corpusId={corpusId} documents={documents.data} live={uploads.state.docs} flat={show === "failed"} />}
      </section>
      <DeleteCorpusDialog corpus={c} open={deleting} onOpenChange={setDeleting} />
      {tuning && <SearchSettingsDialog corpus={c} open={tuning} onOpenChange={setTuning} />}
      {ocrOpen && <OcrSettingsDialog corpus={c} open={ocrOpen} onOpenChange={setOcrOpen} />}
      <ExportBundleDialog corpus={c} open={exporting} onOpenChange={setExporting} />
    </div>
  );
}

/**
 * The audit log: filter the trail, open an entry, export it (JSONL/CSV, signed) for the
 * chosen time range, and verify that nothing was altered. Needs the `audit.read` scope.
 */
import { useMutation } from "@tanstack/react-query";
import { Download, RefreshCw, ScrollText, ShieldCheck } from "lucide-react";
import { useMemo, useState } from "react";
import { useApi } from "../api/api-context.js";
import { exportAudit, verifyAudit, type AuditExportFormat } from "../api/audit-api.js";
import type { AuditEvent } from "../api/contract.js";
import { useAuth } from "../auth/principal-context.js";
import { countOf, useI18n } from "../i18n/i18n.js";
import { downloadBlob } from "../lib/format.js";
import { useDebounced } from "../lib/use-debounced.js";
import { EmptyState } from "../ui/EmptyState.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { isScopeRefusal, ScopeRequired } from "../ui/ScopeRequired.js";
import { Skeleton } from "../ui/Skeleton.js";
import { AuditEntryDrawer } from "./AuditEntryDrawer.js";
import { AuditFilterBar } from "./AuditFilterBar.js";
import { exportRange, isFiltered, NO_FILTERS, type AuditFilters } from "./audit-filters.js";
import { AuditTable } from "./AuditTable.js";
import { SigningKeyCard } from "./SigningKeyCard.js";
import { useAuditEvents } from "./use-audit-events.js";
import { VerifyResult } from "./VerifyResult.js";
import "./audit.css";

export function AuditPage() {
  const { t } = useI18n();
  const { principal } = useAuth();
  if (!principal.scopes.includes("audit.read")) return <ScopeRequired page={t("audit.title")} scope="audit.read" />;
  return <AuditLog />;
}

function AuditLog() {
  const { t, number } = useI18n();
  const client = useApi();
  const [filters, setFilters] = useState<AuditFilters>(NO_FILTERS);
  const [open, setOpen] = useState<AuditEvent | null>(null);
  const query = useDebounced(filters, 250);
  const events = useAuditEvents(query);
  const verify = useMutation({ mutationFn: async () => ({ result: await verifyAudit(client), at: Date.now() }) });
  const exporting = useMutation({
    mutationFn: async (format: AuditExportFormat) => {
      const file = await exportAudit(client, format, exportRange(filters));
      downloadBlob(file.filename, file.blob);
      return file.filename;
    },
  });
  const rows = useMemo(() => events.data?.pages.flatMap((p) => p.data) ?? [], [events.data]);
  const actors = useMemo(() => [...new Set(rows.map((e) => e.actor))].sort(), [rows]);

  if (events.isError && isScopeRefusal(events.error)) return <ScopeRequired page={t("audit.title")} scope="audit.read" error={events.error} />;

  return (
    <div className="page-pad audit-page">
      <header className="page-head">
        <div className="page-titles">
          <h1>{t("audit.title")}</h1>
          <p className="page-sub">{t("audit.subtitle")}</p>
        </div>
        <div className="row">
          <button type="button" className="btn" onClick={() => exporting.mutate("jsonl")} disabled={exporting.isPending} title={t("audit.exportHint")}>
            <Download aria-hidden="true" size={15} /> {t("audit.exportJsonl")}
          </button>
          <button type="button" className="btn" onClick={() => exporting.mutate("csv")} disabled={exporting.isPending} title={t("audit.exportHint")}>
            <Download aria-hidden="true" size={15} /> {t("audit.exportCsv")}
          </button>
          <button type="button" className="btn btn-primary" onClick={() => verify.mutate()} disabled={verify.isPending}>
            <ShieldCheck aria-hidden="true" size={15} /> {verify.isPending ? t("audit.verifying") : t("audit.verify")}
          </button>
        </div>
      </header>
      <div aria-live="polite" className="audit-messages">
        {exporting.isSuccess && <p className="muted export-done">{t("audit.exported", { filename: exporting.data })}</p>}
      </div>
      {exporting.isError && <ErrorNotice error={exporting.error} compact />}
      {verify.isError && <ErrorNotice error={verify.error} onRetry={() => verify.mutate()} compact />}
      {verify.data && <VerifyResult result={verify.data.result} checkedAt={verify.data.at} />}

      <section className="section" aria-labelledby="audit-list-title">
        <h2 id="audit-list-title" className="sr-only">
          {t("audit.filters")}
        </h2>
        <div className="audit-toolbar">
          <AuditFilterBar filters={filters} onChange={setFilters} actors={actors} />
          <button type="button" className="icon-btn audit-refresh" onClick={() => void events.refetch()} aria-label={t("common.refresh")} title={t("common.refresh")}>
            <RefreshCw aria-hidden="true" size={16} className={events.isFetching ? "spin" : undefined} />
          </button>
        </div>
        {events.isPending && <Skeleton rows={8} height={30} />}
        {events.isError && <ErrorNotice error={events.error} onRetry={() => void events.refetch()} />}
        {events.isSuccess && rows.length === 0 && (
          <div className="card">
            {isFiltered(query) ? (
              <EmptyState icon={ScrollText} title={t("audit.noMatchTitle")} actions={<button type="button" className="btn" onClick={() => setFilters(NO_FILTERS)}>{t("audit.filter.clear")}</button>}>
                {t("audit.noMatchBody")}
              </EmptyState>
            ) : (
              <EmptyState icon={ScrollText} title={t("audit.emptyTitle")}>
                {t("audit.emptyBody")}
              </EmptyState>
            )}
          </div>
        )}
        {rows.length > 0 && (
          <>
            <AuditTable events={rows} onOpen={setOpen} />
            <div className="audit-foot">
              <span className="muted">
                {countOf(t, "audit.count", rows.length, number)}
                {events.hasNextPage ? ` · ${t("audit.more")}` : ""}
              </span>
              {events.hasNextPage && (
                <button type="button" className="btn" onClick={() => void events.fetchNextPage()} disabled={events.isFetchingNextPage}>
                  {events.isFetchingNextPage ? t("common.loading") : t("common.loadMore")}
                </button>
              )}
            </div>
          </>
        )}
      </section>
      <SigningKeyCard />
      <AuditEntryDrawer
        event={open}
        onClose={() => setOpen(null)}
        onFilter={(patch) => {
          setOpen(null);
          setFilters((f) => ({ ...f, ...patch }));
        }}
      />
    </div>
  );
}

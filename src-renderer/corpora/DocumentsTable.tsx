/** The documents of a corpus: name, pages, chunks, size, live status; delete with confirmation. */
import { useQueryClient } from "@tanstack/react-query";
import { FileText, Trash2 } from "lucide-react";
import { useState } from "react";
import { useApi } from "../api/api-context.js";
import type { RagDocument } from "../api/contract.js";
import { deleteDocument } from "../api/corpora-api.js";
import { describeCode } from "../i18n/describe-error.js";
import { useI18n } from "../i18n/i18n.js";
import { formatBytes, fraction } from "../lib/format.js";
import { ConfirmDialog } from "../ui/ConfirmDialog.js";
import { EmptyState } from "../ui/EmptyState.js";
import { ProgressBar } from "../ui/ProgressBar.js";
import { StatusBadge } from "../ui/StatusBadge.js";
import { phaseLabel, phaseTone } from "./corpus-status.js";
import type { DocState, Phase } from "./upload-reducer.js";

function phaseOf(doc: RagDocument, live: DocState | undefined): DocState {
  if (doc.status === "indexed" || doc.status === "failed") return { phase: doc.status, progress: null, error: doc.error };
  // A live event is newer than a list fetched before it: an "indexed" event must not fall back to
  // "Reading" while the list is being fetched again.
  if (live) return live;
  return { phase: doc.status === "queued" ? "queued" : ("parsing" satisfies Phase), progress: null, error: null };
}

export function DocumentsTable({ corpusId, documents, live }: { corpusId: string; documents: RagDocument[]; live: Record<string, DocState> }) {
  const { t, number, dateTime } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const [target, setTarget] = useState<RagDocument | null>(null);

  if (documents.length === 0) {
    return (
      <EmptyState icon={FileText} title={t("documents.emptyTitle")}>
        <p>{t("documents.emptyBody")}</p>
      </EmptyState>
    );
  }
  const remove = async (doc: RagDocument) => {
    await deleteDocument(client, corpusId, doc.id);
    await queryClient.invalidateQueries({ queryKey: ["documents", corpusId] });
    await queryClient.invalidateQueries({ queryKey: ["corpus", corpusId] });
  };
  return (
    <div className="table-wrap">
      <table className="table">
        <caption className="sr-only">{t("documents.title")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("documents.col.filename")}</th>
            <th scope="col" className="num">{t("documents.col.pages")}</th>
            <th scope="col" className="num">{t("documents.col.chunks")}</th>
            <th scope="col" className="num">{t("documents.col.size")}</th>
            <th scope="col">{t("documents.col.status")}</th>
            <th scope="col">{t("documents.col.added")}</th>
            <th scope="col">
              <span className="sr-only">{t("common.actions")}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {documents.map((doc) => {
            const state = phaseOf(doc, live[doc.id]);
            const error = state.error ? describeCode(t, state.error.code, state.error.message) : null;
            const active = state.phase !== "indexed" && state.phase !== "failed";
            return (
              <tr key={doc.id}>
                <td className="doc-name" title={doc.filename}>
                  {doc.filename}
                </td>
                <td className="num">{doc.page_count ?? "—"}</td>
                <td className="num">{doc.status === "indexed" ? number(doc.chunk_count) : "—"}</td>
                <td className="num">{formatBytes(doc.bytes)}</td>
                <td className="doc-status">
                  <div className="row">
                    <StatusBadge tone={phaseTone[state.phase]}>{t(phaseLabel[state.phase])}</StatusBadge>
                    {active && <ProgressBar value={state.progress ? fraction(state.progress.done, state.progress.total) : null} label={t("upload.progressOf", { name: doc.filename })} />}
                  </div>
                  {error && (
                    <p className="doc-error">
                      {error.title}
                      {error.detail && <span className="muted"> — {error.detail}</span>}
                    </p>
                  )}
                </td>
                <td className="muted nowrap">{dateTime(doc.created_at)}</td>
                <td>
                  <button type="button" className="icon-btn" aria-label={t("documents.deleteOne", { name: doc.filename })} onClick={() => setTarget(doc)}>
                    <Trash2 aria-hidden="true" size={15} />
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <ConfirmDialog
        open={target !== null}
        onOpenChange={(open) => !open && setTarget(null)}
        title={t("documents.deleteTitle")}
        confirmLabel={t("common.delete")}
        onConfirm={() => (target ? remove(target) : Promise.resolve())}
      >
        <p>{t("documents.deleteBody", { name: target?.filename ?? "" })}</p>
      </ConfirmDialog>
    </div>
  );
}

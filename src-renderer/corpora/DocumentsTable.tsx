/**
 * The documents of a corpus: name, pages, chunks, size, live status; what OCR read; the
 * documents that came out of an upload (an e-mail's attachments, a mailbox's messages)
 * folded under it and fetched a page at a time when opened; delete with confirmation.
 */
import { useQueryClient } from "@tanstack/react-query";
import { FileText } from "lucide-react";
import { useState } from "react";
import { useApi } from "../api/api-context.js";
import type { RagDocument } from "../api/contract.js";
import { deleteDocument } from "../api/corpora-api.js";
import { countOf, useI18n } from "../i18n/i18n.js";
import { ConfirmDialog } from "../ui/ConfirmDialog.js";
import { EmptyState } from "../ui/EmptyState.js";
import { ChildRows, DocumentRow, type DocumentRowProps } from "./DocumentRow.js";
import { documentTree, type DocumentTree } from "./document-tree.js";
import { OcrDetailsDialog } from "./OcrDetailsDialog.js";
import type { DocState } from "./upload-reducer.js";

/** Uploads shown before "Show more" (a corpus of thousands stays quick to draw). */
const ROOTS_PAGE = 100;

export interface DocumentsTableProps {
  corpusId: string;
  documents: RagDocument[];
  live: Record<string, DocState>;
  /** A filtered list (the failed ones): every document on its own row, its relation named. */
  flat?: boolean;
}

export function DocumentsTable({ corpusId, documents, live, flat = false }: DocumentsTableProps) {
  const { t, number } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const [target, setTarget] = useState<RagDocument | null>(null);
  const [ocrOf, setOcrOf] = useState<RagDocument | null>(null);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const [shown, setShown] = useState(ROOTS_PAGE);

  if (documents.length === 0) {
    return (
      <EmptyState icon={FileText} title={t("documents.emptyTitle")} titleLevel={3}>
        <p>{t("documents.emptyBody")}</p>
      </EmptyState>
    );
  }
  const tree: DocumentTree = flat ? { roots: documents, children: new Map() } : documentTree(documents);
  const toggle = (id: string) =>
    setExpanded((now) => {
      const next = new Set(now);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const remove = async (doc: RagDocument) => {
    await deleteDocument(client, corpusId, doc.id);
    await queryClient.invalidateQueries({ queryKey: ["documents", corpusId] });
    await queryClient.invalidateQueries({ queryKey: ["corpus", corpusId] });
  };
  const rowProps = { corpusId, live, tree, expanded, onToggle: toggle, onDelete: setTarget, onOcr: setOcrOf };
  const targetChildren = target ? tree.children.get(target.id) : undefined;
  const roots = tree.roots.slice(0, shown);

  return (
    <div className="table-wrap">
      <table className="table documents-table">
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
          {roots.map((doc) => (
            <DocumentGroup key={doc.id} doc={doc} level={0} flat={flat} {...rowProps} />
          ))}
          {tree.roots.length > shown && (
            <tr className="doc-more">
              <td colSpan={7}>
                <button type="button" className="btn btn-small" onClick={() => setShown((n) => n + ROOTS_PAGE)}>
                  {t("documents.showMore", { n: number(Math.min(ROOTS_PAGE, tree.roots.length - shown)), left: number(tree.roots.length - shown) })}
                </button>
              </td>
            </tr>
          )}
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
        {targetChildren && <p>{countOf(t, "documents.deleteChildren", targetChildren.count, number)}</p>}
      </ConfirmDialog>
      {ocrOf && <OcrDetailsDialog document={ocrOf} open onOpenChange={(open) => !open && setOcrOf(null)} />}
    </div>
  );
}

/** A document's row, and when it is opened, the rows of the documents that came out of it. */
function DocumentGroup(props: DocumentRowProps & { flat: boolean }) {
  const { doc, tree, expanded, flat, level } = props;
  const derived = tree.children.get(doc.id);
  const open = derived !== undefined && expanded.has(doc.id);
  return (
    <>
      <DocumentRow {...props} showRelation={flat || level > 0} />
      {open && <ChildRows corpusId={props.corpusId} parent={doc} total={derived.count} level={level + 1} render={(child) => <DocumentGroup key={child.id} {...props} doc={child} level={level + 1} />} />}
    </>
  );
}

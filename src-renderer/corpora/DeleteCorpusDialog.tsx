/** Deleting a corpus, with what retention means and the date its data becomes unrecoverable. */
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useApi } from "../api/api-context.js";
import type { Corpus } from "../api/contract.js";
import { deleteCorpus } from "../api/corpora-api.js";
import { useI18n } from "../i18n/i18n.js";
import { routeHref } from "../lib/route.js";
import { ConfirmDialog } from "../ui/ConfirmDialog.js";

/** Where the list page finds the result of a deletion, to say when the data is gone for good. */
export const DELETED_NOTICE_KEY = "pustaka.corpora.deleted";

export function DeleteCorpusDialog({ corpus, open, onOpenChange }: { corpus: Corpus; open: boolean; onOpenChange: (open: boolean) => void }) {
  const { t, date } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const [now] = useState(() => Math.floor(Date.now() / 1000));
  const expected = now + corpus.retention_days * 86_400;
  const remove = async () => {
    const deleted = await deleteCorpus(client, corpus.id);
    sessionStorage.setItem(DELETED_NOTICE_KEY, JSON.stringify({ name: corpus.name, expires: deleted.tombstone_expires_at }));
    queryClient.removeQueries({ queryKey: ["corpus", corpus.id] });
    await queryClient.invalidateQueries({ queryKey: ["corpora"] });
    window.location.hash = routeHref({ page: "corpora", corpusId: null });
  };
  return (
    <ConfirmDialog open={open} onOpenChange={onOpenChange} title={t("deleteCorpus.title", { name: corpus.name })} confirmLabel={t("deleteCorpus.confirm")} onConfirm={remove}>
      <p>{t("deleteCorpus.body", { docs: corpus.document_counts.total })}</p>
      <p>{corpus.retention_days > 0 ? t("deleteCorpus.retention", { days: corpus.retention_days, date: date(expected) }) : t("deleteCorpus.retentionZero")}</p>
      <p className="strong">{t("deleteCorpus.irreversible")}</p>
    </ConfirmDialog>
  );
}

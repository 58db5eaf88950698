/** Saved conversations: open, start a new one, rename, export as Markdown, delete. */
import { useQueryClient } from "@tanstack/react-query";
import { Download, MoreHorizontal, Pencil, Plus, Trash2 } from "lucide-react";
import { DropdownMenu } from "radix-ui";
import { useState, type FormEvent } from "react";
import { isMissingEndpoint } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import type { Conversation } from "../api/contract.js";
import { deleteConversation, exportConversation, getConversation, renameConversation } from "../api/conversations-api.js";
import { useI18n } from "../i18n/i18n.js";
import { downloadText, slug } from "../lib/format.js";
import { ConfirmDialog } from "../ui/ConfirmDialog.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Modal } from "../ui/Modal.js";
import { Skeleton } from "../ui/Skeleton.js";
import { conversationMarkdown } from "./export-markdown.js";
import type { useConversationList } from "./use-conversations.js";

export interface ConversationListProps {
  list: ReturnType<typeof useConversationList>;
  activeId: string | null;
  onOpen: (id: string | null) => void;
}

export function ConversationList({ list, activeId, onOpen }: ConversationListProps) {
  const { t, dateTime } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const [renaming, setRenaming] = useState<Conversation | null>(null);
  const [deleting, setDeleting] = useState<Conversation | null>(null);
  const [title, setTitle] = useState("");
  const [actionError, setActionError] = useState<unknown>(null);

  const refresh = () => queryClient.invalidateQueries({ queryKey: ["conversations"] });
  const rename = async (e: FormEvent) => {
    e.preventDefault();
    if (!renaming || !title.trim()) return;
    try {
      await renameConversation(client, renaming.id, title.trim());
      setRenaming(null);
      await refresh();
      await queryClient.invalidateQueries({ queryKey: ["conversation", renaming.id] });
    } catch (error) {
      setActionError(error);
    }
  };
  const exportOne = async (c: Conversation) => {
    setActionError(null);
    try {
      let text: string;
      try {
        text = await exportConversation(client, c.id);
      } catch (error) {
        if (!isMissingEndpoint(error)) throw error;
        text = conversationMarkdown(await getConversation(client, c.id));
      }
      downloadText(`${slug(c.title)}.md`, text);
    } catch (error) {
      setActionError(error);
    }
  };
  const remove = async (c: Conversation) => {
    await deleteConversation(client, c.id);
    queryClient.removeQueries({ queryKey: ["conversation", c.id] });
    await refresh();
    if (c.id === activeId) onOpen(null);
  };

  return (
    <nav className="conv-list" aria-label={t("conv.title")}>
      <button type="button" className="btn btn-primary conv-new" onClick={() => onOpen(null)}>
        <Plus aria-hidden="true" size={16} /> {t("conv.new")}
      </button>
      {list.available && list.isPending && <Skeleton rows={6} height={28} />}
      {list.available && list.isError && <ErrorNotice error={list.error} onRetry={() => void list.refetch()} compact />}
      {actionError !== null && <ErrorNotice error={actionError} compact />}
      {list.data?.length === 0 && <p className="conv-empty">{t("conv.empty")}</p>}
      <ul className="conv-items">
        {list.data?.map((c) => (
          <li key={c.id} className={c.id === activeId ? "conv-item active" : "conv-item"}>
            <button type="button" className="conv-open" onClick={() => onOpen(c.id)} aria-current={c.id === activeId ? "page" : undefined}>
              <span className="conv-title">{c.title || t("conv.untitled")}</span>
              <span className="conv-meta">
                {c.corpus_id ? t("conv.grounded") : t("conv.plain")} · {dateTime(c.updated_at)}
              </span>
            </button>
            <DropdownMenu.Root>
              <DropdownMenu.Trigger className="icon-btn conv-more" aria-label={t("conv.actionsFor", { title: c.title })}>
                <MoreHorizontal aria-hidden="true" size={16} />
              </DropdownMenu.Trigger>
              <DropdownMenu.Portal>
                <DropdownMenu.Content className="menu" align="end" sideOffset={4}>
                  <DropdownMenu.Item
                    className="menu-item"
                    onSelect={() => {
                      setTitle(c.title);
                      setActionError(null);
                      setRenaming(c);
                    }}
                  >
                    <Pencil aria-hidden="true" size={14} /> {t("conv.rename")}
                  </DropdownMenu.Item>
                  <DropdownMenu.Item className="menu-item" onSelect={() => void exportOne(c)}>
                    <Download aria-hidden="true" size={14} /> {t("conv.export")}
                  </DropdownMenu.Item>
                  <DropdownMenu.Separator className="menu-sep" />
                  <DropdownMenu.Item className="menu-item danger" onSelect={() => setDeleting(c)}>
                    <Trash2 aria-hidden="true" size={14} /> {t("common.delete")}
                  </DropdownMenu.Item>
                </DropdownMenu.Content>
              </DropdownMenu.Portal>
            </DropdownMenu.Root>
          </li>
        ))}
      </ul>
      <Modal open={renaming !== null} onOpenChange={(open) => !open && setRenaming(null)} title={t("conv.renameTitle")}>
        <form className="stack" onSubmit={(e) => void rename(e)}>
          <label className="field">
            <span className="field-label">{t("conv.titleLabel")}</span>
            <input className="input" value={title} onChange={(e) => setTitle(e.target.value)} maxLength={200} autoFocus required />
          </label>
          {actionError !== null && <ErrorNotice error={actionError} compact />}
          <div className="dialog-actions">
            <button type="button" className="btn" onClick={() => setRenaming(null)}>
              {t("common.cancel")}
            </button>
            <button type="submit" className="btn btn-primary" disabled={!title.trim()}>
              {t("common.save")}
            </button>
          </div>
        </form>
      </Modal>
      <ConfirmDialog
        open={deleting !== null}
        onOpenChange={(open) => !open && setDeleting(null)}
        title={t("conv.deleteTitle")}
        confirmLabel={t("common.delete")}
        onConfirm={() => (deleting ? remove(deleting) : Promise.resolve())}
      >
        <p>{t("conv.deleteBody", { title: deleting?.title ?? "" })}</p>
      </ConfirmDialog>
    </nav>
  );
}

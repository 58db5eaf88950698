/** One audit entry in full: who, what, when, every recorded fact, and the hashes that chain it. */
import { Filter } from "lucide-react";
import type { AuditEvent } from "../api/contract.js";
import { useI18n } from "../i18n/i18n.js";
import { CopyButton } from "../ui/CopyButton.js";
import { Drawer } from "../ui/Drawer.js";
import { StatusBadge } from "../ui/StatusBadge.js";
import { describeActor, groupLabelKey } from "./audit-facts.js";

export interface AuditEntryDrawerProps {
  event: AuditEvent | null;
  onClose: () => void;
  /** Narrows the list to this actor's or this request's entries. */
  onFilter: (patch: { actor?: string; requestId?: string }) => void;
}

const show = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

export function AuditEntryDrawer({ event, onClose, onFilter }: AuditEntryDrawerProps) {
  const { t, dateTimePrecise } = useI18n();
  const group = event ? groupLabelKey(event.type) : null;
  const actor = event ? describeActor(event.actor, t) : null;
  const data = event ? Object.entries(event.data) : [];
  return (
    <Drawer open={event !== null} onOpenChange={(open) => !open && onClose()} title={event ? event.type : t("audit.details.title")} subtitle={event ? `${group ? `${t(group)} · ` : ""}${dateTimePrecise(Date.parse(event.time) / 1000)}` : undefined}>
      {event && actor && (
        <>
          <dl className="facts">
            <dt>{t("audit.details.time")}</dt>
            <dd className="mono">{event.time}</dd>
            <dt>{t("audit.details.outcome")}</dt>
            <dd>
              <StatusBadge tone={event.outcome === "success" ? "success" : "danger"}>{t(`audit.outcome.${event.outcome}`)}</StatusBadge>
            </dd>
            <dt>{t("audit.details.actor")}</dt>
            <dd>
              {actor.kind} <span className="mono">{event.actor}</span>
            </dd>
            <dt>{t("audit.details.requestId")}</dt>
            <dd className="mono">{event.request_id ?? "—"}</dd>
            <dt>{t("audit.details.chain")}</dt>
            <dd className="mono">{event.chain}</dd>
            <dt>{t("audit.details.seq")}</dt>
            <dd className="mono">#{event.seq}</dd>
            <dt>{t("audit.details.id")}</dt>
            <dd className="mono">{event.id}</dd>
          </dl>
          <div className="row wrap">
            <button type="button" className="btn btn-small" onClick={() => onFilter({ actor: event.actor })}>
              <Filter aria-hidden="true" size={14} /> {t("audit.details.sameActor")}
            </button>
            {event.request_id && (
              <button type="button" className="btn btn-small" onClick={() => onFilter({ requestId: event.request_id ?? "" })}>
                <Filter aria-hidden="true" size={14} /> {t("audit.details.sameRequest")}
              </button>
            )}
          </div>
          <section className="stack-tight" aria-labelledby="audit-data-title">
            <h3 id="audit-data-title">{t("audit.details.data")}</h3>
            {data.length === 0 ? (
              <p className="muted">{t("audit.details.noData")}</p>
            ) : (
              <dl className="facts data-facts">
                {data.map(([name, value]) => (
                  <div key={name} className="fact-pair">
                    <dt className="mono">{name}</dt>
                    <dd className="mono">{show(value)}</dd>
                  </div>
                ))}
              </dl>
            )}
          </section>
          <section className="stack-tight" aria-labelledby="audit-hash-title">
            <h3 id="audit-hash-title">{t("audit.details.chainTitle")}</h3>
            <p className="field-hint">{t("audit.details.chainHint")}</p>
            <dl className="facts">
              <dt>{t("audit.details.hash")}</dt>
              <dd className="mono hash">{event.hash}</dd>
              <dt>{t("audit.details.prevHash")}</dt>
              <dd className="mono hash">{event.prev_hash}</dd>
            </dl>
          </section>
          <div>
            <CopyButton text={JSON.stringify(event, null, 2)} label={t("audit.details.copyJson")} className="btn" showLabel />
          </div>
        </>
      )}
    </Drawer>
  );
}

/** Audit entries, newest first: time, event, actor, outcome and the key facts; a row opens its details. */
import type { AuditEvent } from "../api/contract.js";
import { useI18n } from "../i18n/i18n.js";
import { StatusBadge } from "../ui/StatusBadge.js";
import { describeActor, groupLabelKey, keyFacts } from "./audit-facts.js";

export function AuditTable({ events, onOpen }: { events: AuditEvent[]; onOpen: (event: AuditEvent) => void }) {
  const { t, dateTimePrecise } = useI18n();
  return (
    <div className="table-wrap">
      <table className="table audit-table">
        <caption className="sr-only">{t("audit.title")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("audit.col.time")}</th>
            <th scope="col">{t("audit.col.type")}</th>
            <th scope="col">{t("audit.col.actor")}</th>
            <th scope="col">{t("audit.col.outcome")}</th>
            <th scope="col">{t("audit.col.facts")}</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => {
            const when = dateTimePrecise(Date.parse(event.time) / 1000);
            const actor = describeActor(event.actor, t);
            const group = groupLabelKey(event.type);
            return (
              <tr key={event.id} className="audit-row" onClick={() => onOpen(event)}>
                <td className="nowrap">
                  <button type="button" className="link-btn" onClick={(e) => (e.stopPropagation(), onOpen(event))} aria-label={t("audit.showDetails", { type: event.type, time: when })}>
                    {when}
                  </button>
                </td>
                <td>
                  <span className="mono audit-type">{event.type}</span>
                  {group && <span className="cell-sub">{t(group)}</span>}
                </td>
                <td className="audit-actor-cell">
                  <span>{actor.kind}</span>
                  {actor.id && <span className="cell-sub mono">{actor.id}</span>}
                </td>
                <td>
                  <StatusBadge tone={event.outcome === "success" ? "success" : "danger"}>{t(`audit.outcome.${event.outcome}`)}</StatusBadge>
                </td>
                <td>
                  <ul className="fact-list">
                    {keyFacts(event, t).map((fact, i) => (
                      <li key={i} className={fact.bad ? "fact fact-bad" : "fact"}>
                        {fact.text}
                      </li>
                    ))}
                  </ul>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

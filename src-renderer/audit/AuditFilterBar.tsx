/** The audit filters: event type group, outcome, time range (presets or custom) and actor. */
import { FunnelX, X } from "lucide-react";
import { useId } from "react";
import { useI18n, type MessageKey } from "../i18n/i18n.js";
import { NO_FILTERS, TIME_RANGES, TYPE_GROUPS, isFiltered, isoToLocalInput, localInputToIso, withRange, type AuditFilters, type TimeRange, type TypeGroup } from "./audit-filters.js";

export interface AuditFilterBarProps {
  filters: AuditFilters;
  onChange: (next: AuditFilters) => void;
  /** Actors seen in the loaded entries, offered as suggestions. */
  actors: string[];
}

export function AuditFilterBar({ filters, onChange, actors }: AuditFilterBarProps) {
  const { t } = useI18n();
  const id = useId();
  const set = (patch: Partial<AuditFilters>) => onChange({ ...filters, ...patch });
  return (
    <div className="audit-filters" role="group" aria-label={t("audit.filters")}>
      <div className="field">
        <label className="field-label" htmlFor={`${id}-type`}>
          {t("audit.filter.type")}
        </label>
        <select id={`${id}-type`} className="select" value={filters.type} onChange={(e) => set({ type: e.target.value as TypeGroup | "" })}>
          <option value="">{t("audit.filter.all")}</option>
          {TYPE_GROUPS.map((group) => (
            <option key={group} value={group}>
              {t(`audit.group.${group}` as MessageKey)}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label className="field-label" htmlFor={`${id}-outcome`}>
          {t("audit.filter.outcome")}
        </label>
        <select id={`${id}-outcome`} className="select" value={filters.outcome} onChange={(e) => set({ outcome: e.target.value as AuditFilters["outcome"] })}>
          <option value="">{t("audit.filter.all")}</option>
          <option value="success">{t("audit.outcome.success")}</option>
          <option value="failure">{t("audit.outcome.failure")}</option>
        </select>
      </div>
      <div className="field">
        <label className="field-label" htmlFor={`${id}-range`}>
          {t("audit.filter.range")}
        </label>
        <select id={`${id}-range`} className="select" value={filters.range} onChange={(e) => onChange(withRange(filters, e.target.value as TimeRange, Date.now()))}>
          {TIME_RANGES.map((range) => (
            <option key={range} value={range}>
              {t(`audit.range.${range}`)}
            </option>
          ))}
        </select>
      </div>
      {filters.range === "custom" && (
        <>
          <div className="field">
            <label className="field-label" htmlFor={`${id}-from`}>
              {t("audit.filter.from")}
            </label>
            <input id={`${id}-from`} className="input" type="datetime-local" value={isoToLocalInput(filters.since)} onChange={(e) => set({ since: localInputToIso(e.target.value) })} />
          </div>
          <div className="field">
            <label className="field-label" htmlFor={`${id}-to`}>
              {t("audit.filter.to")}
            </label>
            <input id={`${id}-to`} className="input" type="datetime-local" value={isoToLocalInput(filters.until)} onChange={(e) => set({ until: localInputToIso(e.target.value) })} />
          </div>
        </>
      )}
      <div className="field audit-actor">
        <label className="field-label" htmlFor={`${id}-actor`}>
          {t("audit.filter.actor")}
        </label>
        <input id={`${id}-actor`} className="input mono" list={`${id}-actors`} value={filters.actor} placeholder={t("audit.filter.actorPlaceholder")} onChange={(e) => set({ actor: e.target.value })} spellCheck={false} />
        <datalist id={`${id}-actors`}>
          {actors.map((actor) => (
            <option key={actor} value={actor} />
          ))}
        </datalist>
      </div>
      {filters.requestId && (
        <div className="field">
          <span className="field-label">{t("audit.details.requestId")}</span>
          <span className="filter-chip">
            <span className="mono">{filters.requestId}</span>
            <button type="button" className="icon-btn" aria-label={t("audit.filter.clearRequest")} onClick={() => set({ requestId: "" })}>
              <X aria-hidden="true" size={14} />
            </button>
          </span>
        </div>
      )}
      {isFiltered(filters) && (
        <button type="button" className="btn btn-ghost audit-clear" onClick={() => onChange(NO_FILTERS)}>
          <FunnelX aria-hidden="true" size={15} /> {t("audit.filter.clear")}
        </button>
      )}
    </div>
  );
}

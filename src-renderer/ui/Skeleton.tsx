/** Loading placeholders shaped like what is coming. */
import { useI18n } from "../i18n/i18n.js";

export function Skeleton({ rows = 3, height = 18 }: { rows?: number; height?: number }) {
  const { t } = useI18n();
  return (
    <div className="skeleton-group" role="status" aria-label={t("common.loading")}>
      {Array.from({ length: rows }, (_, i) => (
        <div key={i} className="skeleton" style={{ height, width: `${92 - ((i * 17) % 40)}%` }} />
      ))}
    </div>
  );
}

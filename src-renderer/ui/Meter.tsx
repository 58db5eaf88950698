/** How much of a limit is used: a labelled meter that turns amber near the limit and red at it. */
export function Meter({ used, max, label }: { used: number; max: number; label: string }) {
  const fraction = max > 0 ? Math.min(1, Math.max(0, used / max)) : 0;
  const tone = fraction >= 1 ? "danger" : fraction >= 0.8 ? "warning" : "ok";
  return (
    <div className={`meter meter-${tone}`} role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={max} aria-valuenow={Math.min(used, max)}>
      {/* Anything used shows at least a sliver, so 2 of 600 does not look like nothing. */}
      <div className="meter-fill" style={{ width: used > 0 ? `max(4px, ${(fraction * 100).toFixed(1)}%)` : "0" }} />
    </div>
  );
}

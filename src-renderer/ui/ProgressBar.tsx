/** A labelled progress bar; indeterminate when the fraction is unknown. */
/** `valueText`: what a screen reader says instead of the percentage ("page 3 of 12"). */
export function ProgressBar({ value, label, valueText }: { value: number | null; label: string; valueText?: string }) {
  const percent = value === null ? null : Math.round(value * 100);
  return (
    <div
      className={value === null ? "progress indeterminate" : "progress"}
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={percent ?? undefined}
      aria-valuetext={valueText}
    >
      <div className="progress-fill" style={{ width: percent === null ? undefined : `${percent}%` }} />
    </div>
  );
}

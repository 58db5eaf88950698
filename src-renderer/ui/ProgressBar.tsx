/** A labelled progress bar; indeterminate when the fraction is unknown. */
export function ProgressBar({ value, label }: { value: number | null; label: string }) {
  const percent = value === null ? null : Math.round(value * 100);
  return (
    <div
      className={value === null ? "progress indeterminate" : "progress"}
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={percent ?? undefined}
    >
      <div className="progress-fill" style={{ width: percent === null ? undefined : `${percent}%` }} />
    </div>
  );
}

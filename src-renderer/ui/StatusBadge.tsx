/** A coloured status label (corpora, documents, keys, pulls). */
export type Tone = "neutral" | "info" | "success" | "warning" | "danger";

export function StatusBadge({ tone, children }: { tone: Tone; children: string }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}

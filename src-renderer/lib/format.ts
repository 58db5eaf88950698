/** Small formatting helpers shared by the pages. */

/** Bytes as KB/MB/GB (binary units, one decimal). */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return "—";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** A 0–1 fraction, clamped; null when the total is unknown. */
export function fraction(done: number, total: number | null | undefined): number | null {
  if (!total || total <= 0) return null;
  return Math.min(1, Math.max(0, done / total));
}

/** Offers text to the user as a file download. */
export function downloadText(filename: string, text: string, type = "text/markdown"): void {
  downloadBlob(filename, new Blob([text], { type: `${type};charset=utf-8` }));
}

/** Offers bytes to the user as a file download (a browser's download, or Electron's save prompt). */
export function downloadBlob(filename: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** A file name from a title: letters, digits and dashes. */
export function slug(title: string): string {
  return (
    title
      .normalize("NFKD")
      .replace(/[^\w\s-]/g, "")
      .trim()
      .replace(/\s+/g, "-")
      .slice(0, 60)
      .toLowerCase() || "conversation"
  );
}

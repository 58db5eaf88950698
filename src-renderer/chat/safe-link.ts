/** Link policy for model output: only http(s) links survive, and they open outside the app. */

/** The URL if it is absolute http(s), else null (javascript:, data:, file:, relative paths are dropped). */
export function safeHref(href: string | null | undefined): string | null {
  if (!href) return null;
  try {
    const url = new URL(href);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * Cell values as a spreadsheet shows them, where that is simple: numbers without binary
 * floating-point noise, dates and times (Excel stores them as day counts, told apart only
 * by the cell's number format) as ISO dates, percentages with their sign.
 */

export type FormatKind = "general" | "date" | "time" | "datetime" | "percent";

/** Built-in number formats that are dates, times or percentages (ECMA-376 §18.8.30). */
const BUILTIN_FORMATS: Record<number, FormatKind> = { 9: "percent", 10: "percent", 14: "date", 15: "date", 16: "date", 17: "date", 18: "time", 19: "time", 20: "time", 21: "time", 22: "datetime", 45: "time", 46: "time", 47: "time" };
for (const id of [27, 28, 29, 30, 31, 34, 35, 36, 50, 51, 52, 53, 54, 57, 58]) BUILTIN_FORMATS[id] = "date"; // East Asian date formats
for (const id of [32, 33, 55, 56]) BUILTIN_FORMATS[id] = "time";

/** What built-in number format `id` shows; "general" for all but dates, times and percentages. */
export function builtinFormat(id: number): FormatKind {
  return BUILTIN_FORMATS[id] ?? "general";
}

/**
 * What a custom format code shows: quoted text, escapes and bracketed parts (colours,
 * locales) removed, `y`/`d` mean a date, `h`/`s` a time (`m` alone a month), `%` a percentage.
 */
export function formatKind(code: string): FormatKind {
  const section = code.split(";")[0] ?? "";
  const bare = section.replace(/"[^"]*"|\\.|_.|\*./g, "").replace(/\[(h+|m+|s+)\]/gi, "$1").replace(/\[[^\]]*\]/g, "");
  if (/general/i.test(bare) && !/[ydhs]/i.test(bare.replace(/general/gi, ""))) return "general";
  const date = /[yd]/i.test(bare) || (/m/i.test(bare) && !/[hs]/i.test(bare));
  const time = /[hs]/i.test(bare);
  if (date && time) return "datetime";
  if (date) return "date";
  if (time) return "time";
  return bare.includes("%") ? "percent" : "general";
}

/** A number as the sheet would show it when that is simple: dates, times, percentages, else the number. */
export function numberText(raw: string, format: FormatKind, date1904: boolean): string {
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n)) return raw;
  if (format === "percent") return `${plain(n * 100)}%`;
  if (format === "general" || n < 0 || n >= 2_958_466 /* 10000-01-01 */) return plain(n);
  let days = Math.floor(n);
  // Excel counts a 29 February 1900 that never was; serials before it are a day early.
  if (!date1904 && days < 60) days += 1;
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : Date.UTC(1899, 11, 30);
  const iso = new Date(epoch + days * 86_400_000 + Math.round((n - Math.floor(n)) * 86_400) * 1000).toISOString();
  const date = iso.slice(0, 10);
  const time = iso.slice(11, 19).replace(/:00$/, "");
  if (format === "time") return time;
  if (format === "date") return date;
  return `${date} ${time}`;
}

/** Shortest faithful text of a number: 15 significant digits, as spreadsheets show them (0.1 + 0.2 → 0.3). */
function plain(n: number): string {
  return String(Number(n.toPrecision(15)));
}

/** An ISO date-time ("2024-03-15T13:45:00") as "2024-03-15 13:45", a midnight as the date alone. */
export function isoDateTime(value: string): string {
  const match = /^(-?\d{4,}-\d{2}-\d{2})(?:T(\d{2}:\d{2})(:\d{2})?(?:\.\d+)?)?/.exec(value.trim());
  if (!match) return value.trim();
  const [, date, hm, seconds] = match;
  if (!hm || (hm === "00:00" && (!seconds || seconds === ":00"))) return date!;
  return `${date} ${hm}${seconds && seconds !== ":00" ? seconds : ""}`;
}

/**
 * UI language: English or Bahasa Melayu, from one typed catalogue, remembered in
 * localStorage. `t(key, vars)` fills `{name}` placeholders.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { en, type MessageKey } from "./en.js";
import { ms } from "./ms.js";

export type Locale = "en" | "ms";
export type { MessageKey };
export type Vars = Record<string, string | number>;
export type Translate = (key: MessageKey, vars?: Vars) => string;

const catalogues: Record<Locale, Record<MessageKey, string>> = { en, ms };
const STORAGE_KEY = "pustaka.locale";

/** Translates without React (tests, error mapping). */
export function translate(locale: Locale, key: MessageKey, vars?: Vars): string {
  const text = catalogues[locale][key] ?? en[key] ?? key;
  return vars ? text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole)) : text;
}

/**
 * A count in words: `key.one` for exactly one when the catalogue has it ("1 entry"), else
 * `key` with `{n}` ("3 entries"). `n` is shown formatted by `format` (thousands separators).
 */
export function countOf(t: Translate, key: MessageKey, n: number, format: (value: number) => string = String): string {
  const one = `${key}.one`;
  if (n === 1 && one in en) return t(one as MessageKey);
  return t(key, { n: format(n) });
}

export function storedLocale(): Locale {
  try {
    const value = localStorage.getItem(STORAGE_KEY);
    if (value === "en" || value === "ms") return value;
  } catch {
    // Storage unavailable: fall through to the browser's language.
  }
  return navigator.language.toLowerCase().startsWith("ms") ? "ms" : "en";
}

export interface I18n {
  locale: Locale;
  setLocale: (locale: Locale) => void;
  t: Translate;
  /** Date and time in the UI language, from Unix seconds. */
  dateTime: (seconds: number) => string;
  date: (seconds: number) => string;
  /** Date and time to the second ("22 Nov 2026, 10:05:25"), from Unix seconds, for logs. */
  dateTimePrecise: (seconds: number) => string;
  /** A short date ("22 Nov 2026"), from Unix seconds, for table cells. */
  shortDate: (seconds: number) => string;
  number: (value: number) => string;
}

const I18nContext = createContext<I18n | null>(null);

export function I18nProvider({ children, initial }: { children: ReactNode; initial?: Locale }) {
  const [locale, setLocaleState] = useState<Locale>(() => initial ?? storedLocale());
  useEffect(() => {
    document.documentElement.lang = locale === "ms" ? "ms" : "en";
  }, [locale]);
  const setLocale = useCallback((next: Locale) => {
    setLocaleState(next);
    try {
      localStorage.setItem(STORAGE_KEY, next);
    } catch {
      // Not remembered; still switched for this session.
    }
  }, []);
  const value = useMemo<I18n>(() => {
    const tag = locale === "ms" ? "ms-MY" : "en-GB";
    const dt = new Intl.DateTimeFormat(tag, { dateStyle: "medium", timeStyle: "short" });
    const d = new Intl.DateTimeFormat(tag, { dateStyle: "long" });
    const sd = new Intl.DateTimeFormat(tag, { dateStyle: "medium" });
    const dtp = new Intl.DateTimeFormat(tag, { dateStyle: "medium", timeStyle: "medium" });
    const n = new Intl.NumberFormat(tag);
    return {
      locale,
      setLocale,
      t: (key, vars) => translate(locale, key, vars),
      dateTime: (s) => dt.format(new Date(s * 1000)),
      date: (s) => d.format(new Date(s * 1000)),
      shortDate: (s) => sd.format(new Date(s * 1000)),
      dateTimePrecise: (s) => dtp.format(new Date(s * 1000)),
      number: (v) => n.format(v),
    };
  }, [locale, setLocale]);
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  const value = useContext(I18nContext);
  if (!value) throw new Error("useI18n outside I18nProvider");
  return value;
}

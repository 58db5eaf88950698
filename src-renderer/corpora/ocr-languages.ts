/**
 * OCR languages for people: Tesseract's codes ("eng", "msa", "chi_sim") as names in the UI
 * language. Malay is "Bahasa Melayu" in both languages, as the workbench calls it; other
 * codes are named by the browser (Intl.DisplayNames), else shown as the code.
 */
import type { Locale } from "../i18n/i18n.js";

const NAMES: Record<string, { en: string; ms: string }> = {
  eng: { en: "English", ms: "Bahasa Inggeris" },
  msa: { en: "Bahasa Melayu", ms: "Bahasa Melayu" },
  ind: { en: "Bahasa Indonesia", ms: "Bahasa Indonesia" },
  chi_sim: { en: "Chinese (Simplified)", ms: "Cina (Ringkas)" },
  chi_tra: { en: "Chinese (Traditional)", ms: "Cina (Tradisional)" },
  chi_sim_vert: { en: "Chinese (Simplified, vertical)", ms: "Cina (Ringkas, menegak)" },
  chi_tra_vert: { en: "Chinese (Traditional, vertical)", ms: "Cina (Tradisional, menegak)" },
  tam: { en: "Tamil", ms: "Bahasa Tamil" },
  ara: { en: "Arabic", ms: "Bahasa Arab" },
  jpn: { en: "Japanese", ms: "Bahasa Jepun" },
  kor: { en: "Korean", ms: "Bahasa Korea" },
  tha: { en: "Thai", ms: "Bahasa Thai" },
  frk: { en: "German (Fraktur)", ms: "Jerman (Fraktur)" },
};

/** The name of an OCR language in `locale`; the code itself when nothing better is known. */
export function ocrLanguageName(code: string, locale: Locale): string {
  const known = NAMES[code];
  if (known) return known[locale];
  // Tesseract writes variants after an underscore (deu_latf): the base is an ISO 639-2 code.
  const [base, variant] = code.split("_", 2);
  try {
    const name = new Intl.DisplayNames([locale === "ms" ? "ms" : "en"], { type: "language", fallback: "none" }).of(base!);
    if (name) return variant ? `${name} (${variant})` : name;
  } catch {
    // Not a code the browser knows (or no Intl.DisplayNames): the code is shown.
  }
  return code;
}

/** Languages in the order a chooser lists them: the defaults first, then by name. */
export function sortLanguages(codes: readonly string[], first: readonly string[], locale: Locale): string[] {
  const rank = (c: string) => {
    const i = first.indexOf(c);
    return i >= 0 ? i : first.length;
  };
  return [...codes].sort((a, b) => rank(a) - rank(b) || ocrLanguageName(a, locale).localeCompare(ocrLanguageName(b, locale), locale));
}

/** "English + Bahasa Melayu" (the corpus page's facts line). */
export function languageList(codes: readonly string[], locale: Locale): string {
  return codes.map((c) => ocrLanguageName(c, locale)).join(" + ");
}

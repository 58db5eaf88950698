/** English / Bahasa Melayu switch; the choice is remembered. */
import { ToggleGroup } from "radix-ui";
import { useI18n, type Locale } from "../i18n/i18n.js";

export function LanguageSwitch() {
  const { locale, setLocale, t } = useI18n();
  return (
    <ToggleGroup.Root
      type="single"
      className="lang-switch"
      value={locale}
      aria-label={t("shell.language")}
      onValueChange={(value) => {
        if (value === "en" || value === "ms") setLocale(value satisfies Locale);
      }}
    >
      <ToggleGroup.Item value="en" className="lang-item" aria-label="English" lang="en">
        EN
      </ToggleGroup.Item>
      <ToggleGroup.Item value="ms" className="lang-item" aria-label="Bahasa Melayu" lang="ms">
        BM
      </ToggleGroup.Item>
    </ToggleGroup.Root>
  );
}

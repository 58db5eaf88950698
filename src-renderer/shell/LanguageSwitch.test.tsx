import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { I18nProvider, useI18n } from "../i18n/i18n.js";
import { LanguageSwitch } from "./LanguageSwitch.js";

function Label() {
  return <p>{useI18n().t("nav.corpora")}</p>;
}

describe("LanguageSwitch", () => {
  it("switches the UI to Bahasa Melayu and remembers it", async () => {
    const user = userEvent.setup();
    const { unmount } = render(
      <I18nProvider initial="en">
        <LanguageSwitch />
        <Label />
        <p>{"x"}</p>
      </I18nProvider>,
    );
    expect(screen.getByText("Corpora")).toBeInTheDocument();
    await user.click(screen.getByRole("radio", { name: "Bahasa Melayu" }));
    expect(screen.getByText("Korpus")).toBeInTheDocument();
    expect(localStorage.getItem("pustaka.locale")).toBe("ms");
    expect(document.documentElement.lang).toBe("ms");
    unmount();
    render(
      <I18nProvider>
        <Label />
      </I18nProvider>,
    );
    expect(screen.getByText("Korpus")).toBeInTheDocument();
  });
});

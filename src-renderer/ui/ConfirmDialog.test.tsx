import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { describe, expect, it, vi } from "vitest";
import { ApiError } from "../api/api-error.js";
import { I18nProvider } from "../i18n/i18n.js";
import { ConfirmDialog } from "./ConfirmDialog.js";

function Harness({ onConfirm }: { onConfirm: () => Promise<unknown> }) {
  const [open, setOpen] = useState(false);
  return (
    <I18nProvider initial="en">
      <button type="button" onClick={() => setOpen(true)}>
        Delete it
      </button>
      <ConfirmDialog open={open} onOpenChange={setOpen} title="Delete the corpus?" confirmLabel="Delete corpus" onConfirm={onConfirm}>
        <p>Data is unrecoverable after 1 Jan.</p>
      </ConfirmDialog>
    </I18nProvider>
  );
}

describe("ConfirmDialog", () => {
  it("opens with focus on the safe choice, closes on Escape and returns focus", async () => {
    const user = userEvent.setup();
    const onConfirm = vi.fn(() => Promise.resolve());
    render(<Harness onConfirm={onConfirm} />);
    const opener = screen.getByRole("button", { name: "Delete it" });
    await user.click(opener);
    const dialog = await screen.findByRole("alertdialog", { name: "Delete the corpus?" });
    expect(dialog).toHaveTextContent("unrecoverable");
    expect(screen.getByRole("button", { name: "Cancel" })).toHaveFocus();
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
    await waitFor(() => expect(document.activeElement?.textContent).toBe("Delete it"), { timeout: 3000 });
    expect(onConfirm).not.toHaveBeenCalled();
  });

  it("confirms from the keyboard and stays open with the error when the action fails", async () => {
    const user = userEvent.setup();
    const onConfirm = vi.fn(() => Promise.reject(new ApiError({ status: 409, message: "busy", type: "conflict_error", code: "corpus_not_ready" })));
    render(<Harness onConfirm={onConfirm} />);
    await user.click(screen.getByRole("button", { name: "Delete it" }));
    await screen.findByRole("alertdialog");
    await user.tab();
    expect(screen.getByRole("button", { name: "Delete corpus" })).toHaveFocus();
    await user.keyboard("{Enter}");
    expect(onConfirm).toHaveBeenCalledTimes(1);
    expect(await screen.findByRole("alert")).toHaveTextContent(/still indexing/);
    expect(screen.getByRole("alertdialog")).toBeInTheDocument();
  });
});

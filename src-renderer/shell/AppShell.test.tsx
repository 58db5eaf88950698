import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { adminPrincipal, principal, renderWithApp } from "../test-utils/render.js";
import { AppShell } from "./AppShell.js";

describe("AppShell", () => {
  it("offers Audit log and Security under Governance, marking the ones the key may not use", () => {
    renderWithApp(
      <AppShell page="audit">
        <p>page</p>
      </AppShell>,
      { principal },
    );
    const audit = screen.getByRole("link", { name: /Audit log/ });
    expect(audit).toHaveAttribute("href", "#/audit");
    expect(audit).toHaveAttribute("aria-current", "page");
    expect(audit).toHaveAccessibleName("Audit log (Needs the audit.read scope)");
    expect(screen.getByRole("link", { name: /Security/ })).toHaveAccessibleName("Security (Needs the workspaces.manage scope)");
    expect(screen.getByRole("group", { name: "Governance" })).toContainElement(audit);
  });

  it("shows them plainly to a key that has the scopes", () => {
    renderWithApp(
      <AppShell page="chat">
        <p>page</p>
      </AppShell>,
      { principal: adminPrincipal },
    );
    expect(screen.getByRole("link", { name: "Audit log" })).not.toHaveClass("locked");
    expect(screen.getByRole("link", { name: "Security" })).toHaveAttribute("href", "#/security");
  });
});

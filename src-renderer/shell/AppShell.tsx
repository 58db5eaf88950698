/** The frame: navigation, language, who is signed in, and the page. */
import { Bot, KeyRound, Library, Lock, LogOut, MessageSquare, ScrollText, ShieldCheck } from "lucide-react";
import type { ReactNode } from "react";
import type { Scope } from "../api/contract.js";
import { useAuth } from "../auth/principal-context.js";
import { useI18n, type MessageKey } from "../i18n/i18n.js";
import { routeHref, type Page, type Route } from "../lib/route.js";
import { LanguageSwitch } from "./LanguageSwitch.js";
import { ServerStateBanner } from "./ServerStateBanner.js";
import "./AppShell.css";

interface NavItem {
  page: Page;
  route: Route;
  label: MessageKey;
  icon: typeof Bot;
  /** The scope the page needs; without it the entry is marked and the page explains. */
  scope?: Scope;
}

const NAV: NavItem[] = [
  { page: "chat", route: { page: "chat", conversationId: null }, label: "nav.chat", icon: MessageSquare },
  { page: "corpora", route: { page: "corpora", corpusId: null }, label: "nav.corpora", icon: Library },
  { page: "models", route: { page: "models" }, label: "nav.models", icon: Bot },
  { page: "keys", route: { page: "keys" }, label: "nav.keys", icon: KeyRound },
];

const GOVERNANCE: NavItem[] = [
  { page: "audit", route: { page: "audit" }, label: "nav.audit", icon: ScrollText, scope: "audit.read" },
  { page: "security", route: { page: "security" }, label: "nav.security", icon: ShieldCheck, scope: "workspaces.manage" },
];

function NavLinks({ items, page }: { items: NavItem[]; page: Page }) {
  const { t } = useI18n();
  const { principal } = useAuth();
  return (
    <ul className="nav-list">
      {items.map(({ page: p, route, label, icon: Icon, scope }) => {
        const locked = scope !== undefined && !principal.scopes.includes(scope);
        return (
          <li key={p}>
            <a
              className={locked ? "nav-link locked" : "nav-link"}
              href={routeHref(route)}
              aria-current={p === page ? "page" : undefined}
              aria-label={locked ? `${t(label)} (${t("nav.needsScope", { scope })})` : undefined}
              title={locked ? t("nav.needsScope", { scope }) : undefined}
            >
              <Icon aria-hidden="true" size={18} />
              <span>{t(label)}</span>
              {locked && <Lock aria-hidden="true" size={13} className="nav-lock" />}
            </a>
          </li>
        );
      })}
    </ul>
  );
}

export function AppShell({ page, children }: { page: Page; children: ReactNode }) {
  const { t } = useI18n();
  const { principal, signOut } = useAuth();
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        {t("shell.skip")}
      </a>
      <aside className="sidebar">
        <div className="sidebar-brand">
          <span className="brand-mark" aria-hidden="true">
            P
          </span>
          <span className="brand-name">Pustaka</span>
        </div>
        <nav aria-label={t("shell.nav")}>
          <NavLinks items={NAV} page={page} />
          <h2 className="nav-group" id="nav-governance">
            {t("nav.governance")}
          </h2>
          <div role="group" aria-labelledby="nav-governance">
            <NavLinks items={GOVERNANCE} page={page} />
          </div>
        </nav>
        <div className="sidebar-foot">
          <LanguageSwitch />
          <div className="whoami" title={principal.key_id}>
            <span className="whoami-label">{t("shell.signedInAs")}</span>
            <span className="whoami-name">{principal.key_name}</span>
          </div>
          {signOut && (
            <button type="button" className="btn btn-ghost btn-small" onClick={() => void signOut()}>
              <LogOut aria-hidden="true" size={14} /> {t("shell.signOut")}
            </button>
          )}
        </div>
      </aside>
      <div className="shell-main">
        <ServerStateBanner />
        <main id="main" className="page" tabIndex={-1}>
          {children}
        </main>
      </div>
    </div>
  );
}

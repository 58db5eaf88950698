/** The page a principal sees where its key lacks a scope: what is missing and how to get it, never a blank screen. */
import { Lock } from "lucide-react";
import { ApiError } from "../api/api-error.js";
import type { Scope } from "../api/contract.js";
import { useAuth } from "../auth/principal-context.js";
import { describeError } from "../i18n/describe-error.js";
import { useI18n, type MessageKey } from "../i18n/i18n.js";
import { routeHref } from "../lib/route.js";
import { EmptyState } from "./EmptyState.js";

export interface ScopeRequiredProps {
  /** The page's name, e.g. "Audit log". */
  page: string;
  scope: Extract<Scope, "audit.read" | "workspaces.manage">;
  /** The server's refusal, when there was one (its message is shown as detail). */
  error?: unknown;
}

export function ScopeRequired({ page, scope, error }: ScopeRequiredProps) {
  const { t } = useI18n();
  const { principal } = useAuth();
  const detail = error === undefined ? null : describeError(t, error).detail;
  return (
    <div className="page-pad">
      <EmptyState
        icon={Lock}
        title={t("scopeNeeded.title", { page, scope })}
        actions={
          <a className="btn" href={routeHref({ page: "keys" })}>
            {t("scopeNeeded.goKeys")}
          </a>
        }
      >
        <p>{t("scopeNeeded.body", { name: principal.key_name, what: t(`scopeNeeded.what.${scope}` satisfies MessageKey) })}</p>
        <p>{t("scopeNeeded.how", { scope })}</p>
        {detail && <p className="faint mono scope-detail">{detail}</p>}
      </EmptyState>
    </div>
  );
}

/** True for the server's "this key lacks a scope" answer (403; not a refused cross-origin request). */
export function isScopeRefusal(error: unknown): boolean {
  return error instanceof ApiError && error.status === 403 && error.code !== "cross_origin_request";
}

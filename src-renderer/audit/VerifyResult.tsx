/** The outcome of `GET /v1/audit/verify` in plain words: intact with counts, or the first broken link and every problem. */
import { ShieldCheck, ShieldX } from "lucide-react";
import type { AuditProblem, AuditVerification } from "../api/contract.js";
import { countOf, useI18n, type MessageKey, type Translate } from "../i18n/i18n.js";

/** Problems listed before "…and N more". */
const SHOWN = 20;

/** One problem as a sentence ("Entry #12 of chain ws_1 was changed after it was written…"). */
export function problemSentence(problem: AuditProblem, t: Translate): string {
  const where = problem.seq !== null ? t("audit.where.entry", { seq: problem.seq, chain: problem.chain }) : t("audit.where.chain", { chain: problem.chain });
  const key = `audit.reason.${problem.reason}` as MessageKey;
  const sentence = t(key, { where });
  return sentence === key ? `${where}: ${problem.message}` : sentence;
}

export function VerifyResult({ result, checkedAt }: { result: AuditVerification; checkedAt: number }) {
  const { t, number, dateTime } = useI18n();
  const when = t("audit.verify.checkedAt", { time: dateTime(checkedAt / 1000) });
  if (result.valid) {
    return (
      <div className="notice notice-success verify-result" role="status">
        <ShieldCheck aria-hidden="true" size={20} className="notice-icon" />
        <div className="notice-body">
          <p className="notice-title">{t("audit.verify.validTitle")}</p>
          <p className="notice-detail">{t("audit.verify.validBody", { entries: countOf(t, "audit.n.entries", result.checked_entries, number), chains: countOf(t, "audit.n.chains", result.chains.length, number), ms: number(Math.round(result.ms)) })}</p>
          <p className="notice-detail faint">{when}</p>
        </div>
      </div>
    );
  }
  const first = result.first_problem ?? result.problems[0] ?? null;
  const rest = result.problems.filter((p) => p !== first && !(first && p.chain === first.chain && p.seq === first.seq && p.reason === first.reason));
  return (
    <div className="notice notice-error verify-result" role="alert">
      <ShieldX aria-hidden="true" size={20} className="notice-icon" />
      <div className="notice-body stack-tight">
        <p className="notice-title">{t("audit.verify.invalidTitle")}</p>
        <p className="notice-detail">{t("audit.verify.invalidBody", { checked: countOf(t, "audit.n.entries", result.checked_entries, number), ms: number(Math.round(result.ms)) })}</p>
        {first && (
          <p className="verify-first">
            {problemSentence(first, t)}
            <span className="notice-code"> ({first.reason})</span>
          </p>
        )}
        {rest.length > 0 && (
          <details className="verify-problems">
            <summary>{t("audit.verify.problems", { n: result.problems.length })}</summary>
            <ol>
              {rest.slice(0, SHOWN).map((p, i) => (
                <li key={i}>
                  {problemSentence(p, t)} <span className="notice-code">({p.reason})</span>
                </li>
              ))}
            </ol>
            {rest.length > SHOWN && <p className="faint">{t("audit.verify.moreProblems", { n: rest.length - SHOWN })}</p>}
          </details>
        )}
        <p className="notice-detail">{t("audit.verify.advice")}</p>
        <p className="notice-detail faint">{when}</p>
      </div>
    </div>
  );
}

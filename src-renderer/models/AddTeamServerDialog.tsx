/**
 * Adds a remote model: its id and type, one or more replicas (URL, upstream model, optional
 * API key), a connection test before adding, and the server's refusals shown at the field
 * they concern. Keys go to the server once and are never shown again; closing the dialog
 * forgets everything typed.
 */
import { useMutation } from "@tanstack/react-query";
import { CircleAlert, PlugZap, Plus, X } from "lucide-react";
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { ApiError } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import type { CreateRemoteModelRequest, ModelType, RemoteModel, RemoteModelTest } from "../api/contract.js";
import { createRemoteModel, testNewRemoteModel } from "../api/remote-models-api.js";
import { describeError } from "../i18n/describe-error.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";
import { Modal } from "../ui/Modal.js";
import { RemoteTestResults } from "./RemoteTestResults.js";

const TYPES: ModelType[] = ["chat", "embedding", "rerank"];

interface ReplicaDraft {
  /** Stable across edits and removals (React key, focus). */
  key: number;
  url: string;
  model: string;
  apiKey: string;
}

/** Which field a server refusal concerns, from its `param` (`id`, `upstreams.1.url`, …). */
type FieldRef = { field: "id" } | { field: "url" | "model" | "api_key"; replica: number } | null;

/** The model a replica is asked for: its own field, else the URL's `#model`, else the id. */
function upstreamModel(replica: ReplicaDraft | undefined, modelId: string): string | undefined {
  if (!replica) return undefined;
  const hash = replica.url.indexOf("#");
  let fromUrl = "";
  try {
    fromUrl = hash >= 0 ? decodeURIComponent(replica.url.slice(hash + 1)).trim() : "";
  } catch {
    // A malformed escape: the server says so when it matters.
  }
  return replica.model.trim() || fromUrl || modelId.trim() || undefined;
}

export function fieldOf(error: unknown): FieldRef {
  if (!(error instanceof ApiError)) return null;
  if (error.param === "id" || error.code === "model_id_taken") return { field: "id" };
  if (!error.param) return null;
  const match = /^upstreams\.(\d+)\.(url|model|api_key|name)$/.exec(error.param);
  if (!match) return null;
  const field = match[2] === "name" ? "url" : (match[2] as "url" | "model" | "api_key");
  return { field, replica: Number(match[1]) };
}

export interface AddTeamServerDialogProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onAdded: (model: RemoteModel) => void;
  onCloseAutoFocus?: (event: Event) => void;
}

export function AddTeamServerDialog({ open, onOpenChange, onAdded, onCloseAutoFocus }: AddTeamServerDialogProps) {
  const { t } = useI18n();
  return (
    <Modal open={open} onOpenChange={onOpenChange} title={t("team.form.title")} description={t("team.form.desc")} className="team-dialog" onCloseAutoFocus={onCloseAutoFocus}>
      {/* Inside the dialog's content: unmounted on close, so nothing typed (keys included) outlives it. */}
      <AddTeamServerForm onCancel={() => onOpenChange(false)} onAdded={onAdded} />
    </Modal>
  );
}

function AddTeamServerForm({ onCancel, onAdded }: { onCancel: () => void; onAdded: (model: RemoteModel) => void }) {
  const { t } = useI18n();
  const client = useApi();
  const id = useId();
  const [modelId, setModelId] = useState("");
  const [type, setType] = useState<ModelType>("chat");
  const [replicas, setReplicas] = useState<ReplicaDraft[]>([{ key: 0, url: "", model: "", apiKey: "" }]);
  const [result, setResult] = useState<RemoteModelTest | null>(null);
  const [error, setError] = useState<unknown>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const addReplicaRef = useRef<HTMLButtonElement>(null);
  const resultsRef = useRef<HTMLDivElement>(null);
  const focusNext = useRef<string | null>(null);
  /** Each field's element id: `field` of the replica with `key` (ids survive removals, unlike positions). */
  const fieldId = (field: "url" | "model" | "api_key", key: number) => `${id}-${field}-${key}`;
  const focusField = (elementId: string) => document.getElementById(elementId)?.focus();

  const body = (): CreateRemoteModelRequest => ({
    id: modelId.trim(),
    type,
    upstreams: replicas.map((r) => ({
      url: r.url.trim(),
      ...(r.model.trim() ? { model: r.model.trim() } : {}),
      ...(r.apiKey.trim() ? { api_key: r.apiKey.trim() } : {}),
    })),
  });
  const test = useMutation({
    mutationFn: () => testNewRemoteModel(client, body()),
    onMutate: () => {
      setError(null);
      setResult(null);
    },
    onSuccess: setResult,
    onError: setError,
  });
  const create = useMutation({
    mutationFn: () => createRemoteModel(client, body()),
    onMutate: () => setError(null),
    onSuccess: onAdded,
    onError: setError,
  });
  const busy = test.isPending || create.isPending;

  const fieldError = fieldOf(error);
  const errorAt = (field: "id" | "url" | "model" | "api_key", replica?: number) =>
    fieldError !== null && fieldError.field === field && (field === "id" || ("replica" in fieldError && fieldError.replica === replica));

  // A refusal about one field moves the focus there (its message is read with it, as its description).
  useEffect(() => {
    if (!fieldError) return;
    if (fieldError.field === "id") focusField(`${id}-id`);
    else {
      const replica = replicas[fieldError.replica];
      if (replica) focusField(fieldId(fieldError.field, replica.key));
    }
    // Only when a new error arrives.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [error]);
  // A test's answer (or a refusal not about one field) appears below the fold of a long form: bring it into view.
  useEffect(() => {
    if (result || (error !== null && fieldOf(error) === null)) resultsRef.current?.scrollIntoView?.({ block: "nearest" });
  }, [result, error]);
  // A new replica's URL gets the focus.
  useEffect(() => {
    if (focusNext.current) focusField(focusNext.current);
    focusNext.current = null;
  }, [replicas.length]);

  /** Any edit makes an earlier test's answer and refusal stale. */
  const edited = () => {
    setResult(null);
    setError(null);
  };
  const update = (key: number, patch: Partial<ReplicaDraft>) => {
    edited();
    setReplicas((list) => list.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  };
  const addReplica = () => {
    edited();
    const key = Math.max(...replicas.map((r) => r.key)) + 1;
    focusNext.current = fieldId("url", key);
    setReplicas((list) => [...list, { key, url: "", model: "", apiKey: "" }]);
  };
  const removeReplica = (key: number) => {
    edited();
    setReplicas((list) => list.filter((r) => r.key !== key));
    addReplicaRef.current?.focus();
  };
  const runTest = () => {
    if (formRef.current?.reportValidity() === false) return;
    test.mutate();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!busy) create.mutate();
  };

  const inlineError = (errorId: string) => {
    const { title, detail } = describeError(t, error);
    return (
      <p id={errorId} className="field-error" role="alert">
        <CircleAlert aria-hidden="true" size={14} className="field-error-icon" />
        <span>
          <span className="field-error-title">{title}</span>
          {detail && detail !== title && (
            <>
              {" "}
              <span className="field-error-detail" lang="en">
                {detail}
              </span>
            </>
          )}
        </span>
      </p>
    );
  };

  return (
    <form ref={formRef} className="team-form" onSubmit={submit}>
      <div className="team-form-top">
        <div className="field team-form-id">
          <label className="field-label" htmlFor={`${id}-id`}>
            {t("team.form.id")}
          </label>
          <input
            id={`${id}-id`}
            className="input mono"
            value={modelId}
            onChange={(e) => {
              edited();
              setModelId(e.target.value);
            }}
            placeholder="team-chat"
            required
            maxLength={128}
            autoComplete="off"
            spellCheck={false}
            autoFocus
            aria-invalid={errorAt("id") || undefined}
            aria-describedby={errorAt("id") ? `${id}-id-error` : `${id}-id-hint`}
          />
          {errorAt("id") ? inlineError(`${id}-id-error`) : (
            <p id={`${id}-id-hint`} className="field-hint">
              {t("team.form.idHint")}
            </p>
          )}
        </div>
        <fieldset className="field team-form-type">
          <legend className="field-label">{t("team.form.type")}</legend>
          <div className="type-switch">
            {TYPES.map((value) => (
              <label key={value} className="type-switch-item">
                <input
                  type="radio"
                  name={`${id}-type`}
                  value={value}
                  checked={type === value}
                  onChange={() => {
                    edited();
                    setType(value);
                  }}
                />
                <span>{t(`models.type.${value}`)}</span>
              </label>
            ))}
          </div>
        </fieldset>
      </div>

      <fieldset className="team-form-replicas">
        <legend className="field-label">{t("team.form.replicas")}</legend>
        <p id={`${id}-replicas-hint`} className="field-hint">
          {t("team.form.replicasHint")}
        </p>
        {/* Column headings for sighted users; each input carries its own label ("Server URL, replica 2"). */}
        <div className="replica-row replica-row-head" aria-hidden="true">
          <span />
          <span>{t("team.form.url")}</span>
          <span>{t("team.form.model")}</span>
          <span>{t("team.form.apiKey")}</span>
          <span />
        </div>
        <ol className="replica-drafts">
          {replicas.map((r, i) => {
            const n = i + 1;
            const urlId = fieldId("url", r.key);
            const modelFieldId = fieldId("model", r.key);
            const keyId = fieldId("api_key", r.key);
            const label = (field: "team.form.url" | "team.form.model" | "team.form.apiKey") => t("team.form.fieldOf", { field: t(field), n });
            const rowError = (["url", "model", "api_key"] as const).find((field) => errorAt(field, i));
            const describedBy = (elementId: string, field: "url" | "model" | "api_key") => (errorAt(field, i) ? `${elementId}-error` : `${id}-replicas-hint`);
            return (
              <li key={r.key} className="replica-draft">
                <div className="replica-row">
                  <span className="replica-n" aria-hidden="true">
                    {n}
                  </span>
                  <input
                    id={urlId}
                    className="input mono"
                    type="url"
                    inputMode="url"
                    value={r.url}
                    onChange={(e) => update(r.key, { url: e.target.value })}
                    placeholder="https://gpu1.example:8000/v1"
                    required
                    autoComplete="off"
                    spellCheck={false}
                    aria-label={label("team.form.url")}
                    aria-invalid={errorAt("url", i) || undefined}
                    aria-describedby={describedBy(urlId, "url")}
                  />
                  <input
                    id={modelFieldId}
                    className="input mono"
                    value={r.model}
                    onChange={(e) => update(r.key, { model: e.target.value })}
                    placeholder={modelId.trim() || t("team.form.modelPlaceholder")}
                    autoComplete="off"
                    spellCheck={false}
                    aria-label={label("team.form.model")}
                    aria-invalid={errorAt("model", i) || undefined}
                    aria-describedby={describedBy(modelFieldId, "model")}
                  />
                  <input
                    id={keyId}
                    className="input mono"
                    type="password"
                    value={r.apiKey}
                    onChange={(e) => update(r.key, { apiKey: e.target.value })}
                    autoComplete="new-password"
                    spellCheck={false}
                    placeholder={t("team.form.optional")}
                    aria-label={label("team.form.apiKey")}
                    aria-invalid={errorAt("api_key", i) || undefined}
                    aria-describedby={describedBy(keyId, "api_key")}
                  />
                  {replicas.length > 1 ? (
                    <button type="button" className="icon-btn" onClick={() => removeReplica(r.key)} aria-label={t("team.form.removeReplica", { n })}>
                      <X aria-hidden="true" size={15} />
                    </button>
                  ) : (
                    <span />
                  )}
                </div>
                {rowError && <div className="replica-row-error">{inlineError(`${fieldId(rowError, r.key)}-error`)}</div>}
              </li>
            );
          })}
        </ol>
        <div>
          <button ref={addReplicaRef} type="button" className="btn btn-small btn-ghost team-add-replica" onClick={addReplica} disabled={replicas.length >= 64}>
            <Plus aria-hidden="true" size={14} /> {t("team.form.addReplica")}
          </button>
        </div>
      </fieldset>

      <div ref={resultsRef} aria-live="polite" className="team-form-results">
        {result && <RemoteTestResults result={result} modelFor={(_replica, i) => upstreamModel(replicas[i], modelId)} />}
        {error !== null && fieldError === null && <ErrorNotice error={error} compact />}
      </div>

      <div className="dialog-actions team-form-actions">
        <button type="button" className="btn" onClick={runTest} disabled={busy}>
          <PlugZap aria-hidden="true" size={15} /> {test.isPending ? t("team.testing") : t("team.test")}
        </button>
        <span className="spacer" />
        <button type="button" className="btn" onClick={onCancel}>
          {t("common.cancel")}
        </button>
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {create.isPending ? t("common.working") : t("team.form.submit")}
        </button>
      </div>
    </form>
  );
}

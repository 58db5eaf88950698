/** Use a GGUF file already on this computer: a path (Browse through the desktop app), optional id. */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { FolderOpen } from "lucide-react";
import { useId, useState, type FormEvent } from "react";
import { useApi } from "../api/api-context.js";
import { getBridge } from "../api/bridge.js";
import { registerModelFile } from "../api/models-api.js";
import { useI18n } from "../i18n/i18n.js";
import { ErrorNotice } from "../ui/ErrorNotice.js";

export function RegisterFileForm({ prominent = false }: { prominent?: boolean }) {
  const { t } = useI18n();
  const client = useApi();
  const queryClient = useQueryClient();
  const bridge = getBridge();
  const id = useId();
  const [path, setPath] = useState("");
  const [name, setName] = useState("");
  const register = useMutation({
    mutationFn: () => registerModelFile(client, { path: path.trim(), ...(name.trim() ? { id: name.trim() } : {}) }),
    onSuccess: () => {
      setPath("");
      setName("");
      void queryClient.invalidateQueries({ queryKey: ["models"] });
    },
  });
  const browse = async () => {
    const [picked] = (await bridge?.openFileDialog({ kind: "model" })) ?? [];
    if (picked) setPath(picked);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (path.trim()) register.mutate();
  };
  return (
    <section className={prominent ? "section" : "section card"} aria-labelledby={`${id}-title`}>
      <div className="section-head">
        <h2 id={`${id}-title`}>{t("register.title")}</h2>
      </div>
      <p className="field-hint">{t("register.hint")}</p>
      <form className="register-form" onSubmit={submit}>
        <label className="field register-path">
          <span className="field-label">{t("register.path")}</span>
          <span className="row">
            <input className="input mono" value={path} onChange={(e) => setPath(e.target.value)} placeholder={t("register.pathPlaceholder")} required />
            {bridge && (
              <button type="button" className="btn" onClick={() => void browse()}>
                <FolderOpen aria-hidden="true" size={15} /> {t("register.browse")}
              </button>
            )}
          </span>
        </label>
        <label className="field register-id">
          <span className="field-label">{t("register.id")}</span>
          <input className="input mono" value={name} onChange={(e) => setName(e.target.value)} placeholder={t("register.idPlaceholder")} />
        </label>
        <button type="submit" className="btn btn-primary" disabled={!path.trim() || register.isPending}>
          {register.isPending ? t("common.working") : t("register.submit")}
        </button>
      </form>
      {register.isError && <ErrorNotice error={register.error} compact />}
      {register.isSuccess && (
        <p className="notice notice-info compact" role="status">
          {t("register.done")}
        </p>
      )}
    </section>
  );
}

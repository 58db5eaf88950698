/** Turns any failure into words a person understands, in the UI language, with the server's message as detail. */
import { ApiError, isMissingEndpoint } from "../api/api-error.js";
import type { MessageKey, Translate } from "./i18n.js";

/** Error codes with their own sentence in the catalogue (`err.<code>`). */
const KNOWN_CODES = [
  "corpus_not_ready",
  "corpus_not_found",
  "document_not_found",
  "model_not_found",
  "model_not_supported",
  "context_length_exceeded",
  "unsupported_file_type",
  "file_too_large",
  "too_many_files",
  "duplicate_document",
  "empty_file",
  "empty_document",
  "encrypted_document",
  "corrupt_document",
  "document_too_large",
  "document_too_complex",
  "parse_timeout",
  "indexing_failed",
  "server_busy",
  "server_shutting_down",
  "rate_limit_exceeded",
  "insufficient_scope",
  "scope_not_grantable",
  "invalid_session",
  "invalid_sign_in_token",
  "missing_api_key",
  "invalid_api_key",
  "expired_api_key",
  "revoked_api_key",
  "cross_origin_request",
  "network_error",
  "unknown_url",
  "payload_too_large",
  "request_too_large",
  "invalid_model_file",
  "model_file_invalid",
  "too_many_auth_failures",
  "ambiguous_credentials",
  "invalid_host_header",
  "unknown_tier",
  "service_account_not_found",
  "upstream_not_allowed",
  "insecure_upstream",
  "invalid_upstream_url",
  "model_id_taken",
  "model_configured",
  "ocr_unavailable",
  "converter_unavailable",
  "image_too_large",
  "invalid_ocr_languages",
  "page_not_ocr",
  "ocr_data_fetch_failed",
  "ocr_data_unavailable",
  "unknown_ocr_language",
  "bundle_key_mismatch",
  "bundle_tampered",
  "bundle_truncated",
  "bundle_format_unknown",
  "bundle_signature_invalid",
  "bundle_signer_mismatch",
  "bundle_invalid",
  "bundle_version_unsupported",
  "bundle_too_large",
  "bundle_recipient_invalid",
  "bundle_recipient_missing",
  "embedding_model_missing",
  "passphrase_too_short",
  "corpus_busy",
  "import_not_found",
  "import_in_progress",
  "model_not_embedding",
  "export_interrupted",
] as const;

type KnownCode = (typeof KNOWN_CODES)[number];
const isKnown = (code: string): code is KnownCode => (KNOWN_CODES as readonly string[]).includes(code);

/** Fallbacks by error type when the code has no sentence of its own. */
const BY_TYPE: Record<string, MessageKey> = {
  invalid_request_error: "errType.invalid_request_error",
  authentication_error: "errType.authentication_error",
  permission_error: "errType.permission_error",
  not_found_error: "errType.not_found_error",
  conflict_error: "errType.conflict_error",
  rate_limit_error: "errType.rate_limit_error",
  service_unavailable_error: "errType.service_unavailable_error",
};

export interface ErrorDescription {
  /** A sentence for a person. */
  title: string;
  /** The server's own message (or the exception text), for detail. */
  detail: string | null;
  code: string | null;
}

/** Describes an error code alone (document failures and upload rejections carry `{code, message}`). */
export function describeCode(t: Translate, code: string | null | undefined, message?: string | null): ErrorDescription {
  const title = code && isKnown(code) ? t(`err.${code}`) : t("err.generic");
  return { title, detail: message ?? null, code: code ?? null };
}

export function describeError(t: Translate, error: unknown): ErrorDescription {
  if (error instanceof ApiError) {
    if (isMissingEndpoint(error) && error.code !== "unknown_url") return { title: t("err.unknown_url"), detail: error.message, code: error.code };
    let title: string;
    if (error.code && isKnown(error.code)) title = t(`err.${error.code}`);
    else title = t(BY_TYPE[error.type] ?? "err.generic");
    if (error.retryAfter !== null && (error.status === 429 || error.status === 503)) title += " " + t("err.retryAfter", { seconds: error.retryAfter });
    return { title, detail: error.message, code: error.code };
  }
  if (error instanceof Error) return { title: t("err.generic"), detail: error.message, code: null };
  return { title: t("err.generic"), detail: typeof error === "string" ? error : null, code: null };
}

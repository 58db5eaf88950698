/**
 * Opens the key provider the configuration names (`security.provider`): the local key
 * file (development and single-user machines; it says so when opened) or a PKCS#11 HSM.
 * The PKCS#11 module is loaded only when it is used. An embedder with a provider of its
 * own (the desktop's OS keychain) implements `KeyProvider` and passes it instead.
 */
import path from "node:path";
import { ServiceError } from "../errors.js";
import type { RotatableKeyProvider } from "./key-provider.js";
import { LocalKeyFileProvider } from "./local-key-file-provider.js";

/** `config.security`, as far as the providers need it. */
export interface KeyProviderSettings {
  provider: "local-file" | "pkcs11";
  keyFile?: string | undefined;
  pkcs11?: { module: string; tokenLabel: string; keyLabel: string; readPin?: (() => string) | undefined } | undefined;
}

export interface OpenKeyProviderOptions {
  /** The data directory (the key file's default home). */
  dataDir: string;
  /** PKCS#11: generate the KEK in the token when there is none (`pustaka keys init-hsm`). */
  create?: boolean;
  onWarning?: (message: string) => void;
}

export const LOCAL_KEY_FILE_WARNING =
  "the key-encryption key is in a local file (security.provider 'local-file'): meant for development and single-user machines; " +
  "keep it in a hardware security module with security.provider 'pkcs11' (docs/operations.md: Keys in an HSM)";

/** Where the local provider keeps its KEK. */
export function localKeyFile(settings: KeyProviderSettings, dataDir: string): string {
  return settings.keyFile ?? path.join(dataDir, "keys", "kek.bin");
}

export async function openKeyProvider(settings: KeyProviderSettings, options: OpenKeyProviderOptions): Promise<RotatableKeyProvider & { readonly created?: boolean }> {
  if (settings.provider === "pkcs11") {
    const hsm = settings.pkcs11;
    if (!hsm) throw new ServiceError("unavailable", "security.provider is 'pkcs11' but security.pkcs11 is not configured", { code: "hsm_not_configured" });
    const readPin =
      hsm.readPin ??
      (() => {
        throw new ServiceError("unavailable", "no HSM PIN reader configured (security.pkcs11.pinEnv or pinFile)", { code: "hsm_pin_missing" });
      });
    // Loaded on demand: installations without an HSM never load the native PKCS#11 binding.
    const { Pkcs11KeyProvider } = await import("./pkcs11-key-provider.js");
    return Pkcs11KeyProvider.open({ module: hsm.module, tokenLabel: hsm.tokenLabel, keyLabel: hsm.keyLabel, readPin }, { create: options.create });
  }
  options.onWarning?.(LOCAL_KEY_FILE_WARNING);
  return new LocalKeyFileProvider(localKeyFile(settings, options.dataDir));
}

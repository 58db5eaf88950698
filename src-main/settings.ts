/**
 * The desktop app's own settings (a JSON file in the app-data folder): the models folder
 * and the port the server used last. Loading is lenient (a bad field falls back to its
 * default, never a crash); updates are validated and written atomically.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { silentLog, type Log } from "./log.js";
import { writeFileAtomic } from "./write-file-atomic.js";

const fields = {
  /** Folder scanned for `.gguf` models; null = `<data>/models`. */
  modelsDir: z.string().min(1).max(4096).refine((p) => path.isAbsolute(p), "must be an absolute path").nullable(),
  /** The port the server listened on last: asked for again so the window's origin (and its storage) stays the same. */
  serverPort: z.number().int().min(1024).max(65535).nullable(),
};

const SettingsSchema = z.object(fields).strict();
const LenientSchema = z.object({ modelsDir: fields.modelsDir.catch(null).default(null), serverPort: fields.serverPort.catch(null).default(null) });

export type DesktopSettings = z.output<typeof SettingsSchema>;

export const DEFAULT_SETTINGS: DesktopSettings = { modelsDir: null, serverPort: null };

export class SettingsStore {
  private current: DesktopSettings;

  constructor(
    private readonly file: string,
    private readonly log: Log = silentLog,
  ) {
    this.current = this.read();
  }

  get(): DesktopSettings {
    return this.current;
  }

  /** Validates and saves a change (throws on an invalid value); returns the new settings. */
  update(patch: Partial<DesktopSettings>): DesktopSettings {
    const next = SettingsSchema.parse({ ...this.current, ...patch });
    if (JSON.stringify(next) !== JSON.stringify(this.current)) {
      writeFileAtomic(this.file, `${JSON.stringify(next, null, 2)}\n`);
      this.current = next;
    }
    return this.current;
  }

  private read(): DesktopSettings {
    if (!existsSync(this.file)) return { ...DEFAULT_SETTINGS };
    try {
      return LenientSchema.parse(JSON.parse(readFileSync(this.file, "utf8")));
    } catch (error) {
      this.log.warn("the settings file is unreadable; using defaults", { file: this.file, error: String(error) });
      return { ...DEFAULT_SETTINGS };
    }
  }
}

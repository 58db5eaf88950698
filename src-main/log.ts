/**
 * Logging for the desktop shell: a small interface the plain modules take, and JSON-lines
 * log files (pino) under the app's logs folder, rotated once they grow large.
 */
import { existsSync, mkdirSync, renameSync, statSync } from "node:fs";
import path from "node:path";
import pino, { type Logger } from "pino";

export interface Log {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const silentLog: Log = { info() {}, warn() {}, error() {} };

/** Adapts a pino logger to `Log`. */
export function pinoLog(logger: Logger): Log {
  return {
    info: (message, fields) => logger.info(fields ?? {}, message),
    warn: (message, fields) => logger.warn(fields ?? {}, message),
    error: (message, fields) => logger.error(fields ?? {}, message),
  };
}

/** A log file bigger than this is renamed to `<file>.1` (replacing the previous one) when opened. */
const ROTATE_BYTES = 10 * 1024 * 1024;

export interface LogFile {
  logger: Logger;
  log: Log;
  /** Flushes and closes the file. Idempotent. */
  close(): void;
}

/** Opens (creating its folder) a JSON-lines log file at `level`. */
export function openLogFile(file: string, level: Logger["level"] = "info"): LogFile {
  mkdirSync(path.dirname(file), { recursive: true });
  if (existsSync(file) && statSync(file).size > ROTATE_BYTES) renameSync(file, `${file}.1`);
  const destination = pino.destination({ dest: file, sync: false, mkdir: true });
  const logger = pino({ level, base: { pid: process.pid } }, destination);
  let closed = false;
  return {
    logger,
    log: pinoLog(logger),
    close() {
      if (closed) return;
      closed = true;
      try {
        destination.flushSync();
      } catch {
        // Not yet open (nothing written): there is nothing to flush.
      }
      destination.end();
    },
  };
}

/**
 * The logger of `pustaka serve`: JSON lines in `<data-dir>/logs/server.log` (what an
 * operator or a support request reads) and, on stderr, words for a person at a terminal
 * (warnings and errors, pretty-printed) or the same JSON lines when stderr is not a
 * terminal (a service manager or a container collects them).
 */
import path from "node:path";
import pino, { type Logger, type StreamEntry } from "pino";
import pretty from "pino-pretty";
import type { Config } from "../config.js";

export function serverLogger(config: Pick<Config, "dataDir" | "logLevel">, terminal: boolean = process.stderr.isTTY === true): { logger: Logger; logFile: string | null } {
  if (config.logLevel === "silent") return { logger: pino({ level: "silent" }), logFile: null };
  const logFile = path.join(config.dataDir, "logs", "server.log");
  const streams: StreamEntry[] = [{ level: config.logLevel, stream: pino.destination({ dest: logFile, mkdir: true, append: true, sync: false }) }];
  if (terminal) {
    // A person: warnings and errors in words; request lines stay in the file.
    const level = pino.levels.values[config.logLevel]! > pino.levels.values.warn! ? config.logLevel : "warn";
    streams.push({ level, stream: pretty({ destination: 2, sync: true, colorize: true, translateTime: "SYS:HH:MM:ss", ignore: "pid,hostname" }) });
  } else {
    streams.push({ level: config.logLevel, stream: pino.destination(2) });
  }
  return { logger: pino({ level: config.logLevel }, pino.multistream(streams)), logFile };
}

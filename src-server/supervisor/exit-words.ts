/**
 * A child process's end in words a person can act on: what the signal or exit code means
 * for a llama.cpp server and what to do about it.
 */

const SIGNALS: Record<string, string> = {
  SIGILL: "an instruction this CPU does not have (a llama.cpp build made for another CPU); try --llama-build prebuilt, or reinstall so the build is tested on this machine",
  SIGSEGV: "a memory access fault in native code (llama.cpp or an addon)",
  SIGBUS: "a bus error in native code (often a model file changed or truncated while mapped)",
  SIGFPE: "an arithmetic fault in native code",
  SIGABRT: "an abort: a failed llama.cpp assertion or a fatal V8 error (for example JavaScript heap out of memory); the lines above say which",
  SIGKILL: "killed from outside, most often by the kernel's out-of-memory killer (see `dmesg`); a smaller model or context may fit",
  SIGTERM: "asked to stop (SIGTERM)",
  SIGINT: "interrupted (SIGINT)",
};

/** `"SIGILL: an instruction this CPU does not have…"` or `"exit code 1"`. */
export function describeExit(code: number | null, signal: string | null): string {
  if (signal) return `${signal}: ${SIGNALS[signal] ?? "terminated by a signal"}`;
  // A shell reports death by signal N as 128 + N.
  if (code !== null && code > 128 && code < 160) {
    const byNumber: Record<number, string> = { 132: "SIGILL", 134: "SIGABRT", 135: "SIGBUS", 136: "SIGFPE", 137: "SIGKILL", 139: "SIGSEGV" };
    const name = byNumber[code];
    if (name) return `exit code ${code} (${name}: ${SIGNALS[name]})`;
  }
  return `exit code ${code ?? "unknown"}`;
}

/** Whether an exit is a crash (anything but a clean stop or one the person asked for). */
export function isCrash(code: number | null, signal: string | null): boolean {
  if (signal) return signal !== "SIGTERM" && signal !== "SIGINT";
  return code !== 0 && code !== 130;
}

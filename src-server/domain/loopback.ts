/** Whether an address stays on this machine (listening, and reaching upstream servers). */

/** True for addresses and names that only reach this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const name = host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (name === "localhost" || name.endsWith(".localhost") || name === "::1" || name === "0:0:0:0:0:0:0:1") return true;
  const v4 = name.startsWith("::ffff:") ? name.slice(7) : name;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

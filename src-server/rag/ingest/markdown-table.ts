/**
 * Tables as Markdown (GitHub's pipe tables), the one shape every parser gives a table in a
 * passage: a header row, the delimiter row, then the body rows, each cell on one line.
 */

/**
 * Renders a table. Rows shorter than the widest are padded; pipes and backslashes in cells
 * are escaped and line breaks become spaces, so a cell never breaks the grid. With no
 * header row, the first row serves as one (Markdown tables need a header).
 */
export function markdownTable(header: readonly string[] | null, rows: readonly (readonly string[])[]): string {
  const all = header ? [header, ...rows] : rows;
  if (all.length === 0) return "";
  const width = Math.max(1, ...all.map((r) => r.length));
  const line = (cells: readonly string[]) => `| ${Array.from({ length: width }, (_, i) => cell(cells[i] ?? "")).join(" | ")} |`;
  const [head, ...body] = all as (readonly string[])[];
  return [line(head!), `| ${Array.from({ length: width }, () => "---").join(" | ")} |`, ...body.map(line)].join("\n");
}

function cell(text: string): string {
  return text.replace(/\s+/g, " ").trim().replace(/\\/g, "\\\\").replace(/\|/g, "\\|");
}

/** Plain-text tables for the admin CLI: a header line, columns padded to their widest cell. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[], empty: string): string {
  if (rows.length === 0) return `${empty}\n`;
  const lines = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...lines.map((line) => (line[column] ?? "").length)));
  return `${lines.map((line) => line.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ").trimEnd()).join("\n")}\n`;
}

/** "-" for an empty value. */
export function cell(value: string | number | null | undefined): string {
  return value === undefined || value === null || value === "" ? "-" : String(value);
}

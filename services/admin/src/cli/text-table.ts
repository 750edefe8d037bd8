/**
 * Plain-text tables for the admin CLI: a header line, columns padded to their
 * widest cell; and the cells of the reports' counts and provider-reported sums.
 */

/** Plain-text table, every column left-aligned; `empty` (a line) when there are no rows. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[], empty: string): string {
  if (rows.length === 0) return `${empty}\n`;
  return `${alignedTable(header, rows, header.length)}\n`;
}

/** The lines of a table (no trailing newline): the first `textColumns` columns left-aligned, the others (numbers) right-aligned. */
export function alignedTable(header: readonly string[], rows: readonly (readonly string[])[], textColumns: number): string {
  const lines = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...lines.map((line) => (line[column] ?? "").length)));
  return lines
    .map((line) =>
      line
        .map((cell, column) => (column < textColumns ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** A count with thousands separators (en-US). */
export function count(value: number | bigint): string {
  return value.toLocaleString("en-US");
}

/** A sum some of `of` rows reported: "-" when none did, the sum when all did, else "sum (k/N)". */
export function reportedSum(total: number | bigint | undefined, reported: number, of: number): string {
  if (total === undefined || reported === 0) return "-";
  return reported === of ? count(total) : `${count(total)} (${reported}/${of})`;
}

/** "-" for an empty value. */
export function cell(value: string | number | null | undefined): string {
  return value === undefined || value === null || value === "" ? "-" : String(value);
}

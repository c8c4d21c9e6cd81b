/** Renders rows as a plain-text table with a header and aligned columns. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[], maxWidth = 60): string {
  const clip = (text: string) => {
    const single = text.replace(/\s+/g, ' ').trim();
    return single.length > maxWidth ? `${single.slice(0, maxWidth - 1)}…` : single;
  };
  const cells = [headers.map(clip), ...rows.map((row) => row.map(clip))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(cells[0] ?? []), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.slice(1).map(line)].join('\n') + '\n';
}

/** A short one-line preview of a JSON value. */
export function preview(value: unknown, max = 80): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? 'undefined';
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

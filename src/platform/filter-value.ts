/** A platform filter or search string literal: `"..."` with quotes and backslashes escaped. */
export function filterValue(v: string): string {
  return JSON.stringify(v);
}

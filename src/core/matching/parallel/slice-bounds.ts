/** Contiguous slices of count accounts over `parts` threads: bounds[i]..bounds[i+1]. */
export function sliceBounds(count: number, parts: number): number[] {
  const bounds = [0];
  for (let i = 1; i <= parts; i++) bounds.push(Math.round((count * i) / parts));
  return bounds;
}

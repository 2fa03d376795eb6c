/** protobuf `int64` fields arrive as a number or a `Long`. */
export type Int64 = number | { toNumber(): number } | null | undefined;

export function int64(value: Int64): number | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === 'number' ? value : value.toNumber();
}

/**
 * The least string above every string that starts with `prefix`, for a range read by the key index
 * (`key >= prefix AND key < prefixEnd(prefix)`): the prefix with its last code point one higher. Both
 * stores compare keys by their UTF-8 bytes, whose order is that of the code points.
 */
export function prefixEnd(prefix: string): string {
  const points = [...prefix];
  const last = points.pop();
  if (last === undefined) throw new RangeError('an empty prefix has no end');
  return points.join('') + String.fromCodePoint(last.codePointAt(0)! + 1);
}

/**
 * A set of blob ids the client holds, without a string per id. A continuing
 * conversation's checkpoint names hundreds of roots, and each turn marks all
 * of them held while only a few ids are ever looked up by content (a blob
 * about to be SET): making a hex key for each root was most of what the
 * adapter spent per turn on a long conversation. Lookups of the very id
 * objects that were added (a checkpoint names the roots it was given) are one
 * identity check; any other id is found by its first four bytes (SHA-256 ids
 * are uniform) and a byte comparison.
 */
export class HeldIds {
  readonly #objects = new Set<Uint8Array>();
  readonly #byPrefix = new Map<number, Uint8Array[]>();

  add(id: Uint8Array): void {
    if (this.#objects.has(id)) return;
    this.#objects.add(id);
    const prefix = prefixOf(id);
    const bucket = this.#byPrefix.get(prefix);
    if (bucket === undefined) this.#byPrefix.set(prefix, [id]);
    else bucket.push(id);
  }

  has(id: Uint8Array): boolean {
    if (this.#objects.has(id)) return true;
    const bucket = this.#byPrefix.get(prefixOf(id));
    return bucket !== undefined && bucket.some((held) => sameBytes(held, id));
  }
}

/** The id's first four bytes as a number (fewer for a shorter id). */
function prefixOf(id: Uint8Array): number {
  let prefix = id.length;
  for (let i = 0; i < 4 && i < id.length; i++) prefix = (prefix * 256 + id[i]!) % 0x1_0000_0000;
  return prefix;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

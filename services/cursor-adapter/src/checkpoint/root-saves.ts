/**
 * Root blobs saved to the store for the next turn (best effort), the roots put
 * in one tick (a turn's initial messages, a commit's appended messages) in one
 * blob.put_many instead of one blob.put each.
 */
export class RootSaves {
  readonly #save: (blobs: Uint8Array[]) => Promise<void>;
  #batch: Uint8Array[] = [];
  #saved: Promise<void> | undefined;

  constructor(save: (blobs: Uint8Array[]) => Promise<void>) {
    this.#save = save;
  }

  /** Resolves when the batch holding `bytes` was sent and answered (or failed: `save` decides). */
  add(bytes: Uint8Array): Promise<void> {
    this.#batch.push(bytes);
    this.#saved ??= Promise.resolve().then(() => {
      const batch = this.#batch;
      this.#batch = [];
      this.#saved = undefined;
      return this.#save(batch);
    });
    return this.#saved;
  }
}

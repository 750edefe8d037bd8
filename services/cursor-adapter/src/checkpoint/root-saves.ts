/**
 * Root blobs saved to the store for the next turn (best effort), the roots put
 * in one tick (a turn's initial messages, a commit's appended messages) in one
 * blob.put_many instead of one blob.put each.
 */
export class RootSaves {
  readonly #save: (blobs: Uint8Array[]) => Promise<void>;
  readonly #opened: Promise<void>;
  #batch: Uint8Array[] = [];
  #saved: Promise<void> | undefined;

  /** Nothing is saved before `opened` resolves (at once by default): what is added until then goes in one batch. */
  constructor(save: (blobs: Uint8Array[]) => Promise<void>, opened: Promise<void> = Promise.resolve()) {
    this.#save = save;
    this.#opened = opened;
  }

  /** Resolves when the batch holding `bytes` was sent and answered (or failed: `save` decides). */
  add(bytes: Uint8Array): Promise<void> {
    this.#batch.push(bytes);
    this.#saved ??= this.#opened.then(() => {
      const batch = this.#batch;
      this.#batch = [];
      this.#saved = undefined;
      return this.#save(batch);
    });
    return this.#saved;
  }
}

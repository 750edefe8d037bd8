/**
 * Runs work after the frames queued in this pass of the event loop have gone
 * to the client.
 *
 * The RunSSE writer sends the frames of one pass together, in the loop's
 * check phase (connect/loop-batched-writes.ts, setImmediate). Work that must
 * not hold those frames back (the blob SETs that wait for a run's first
 * output, the SETs of a response ahead of its commit) is run from an
 * immediate queued by an immediate: one queued while the check phase runs
 * waits for the next iteration of the loop, so it comes after every flush
 * queued in this pass, whichever was queued first.
 *
 * What is queued in one pass runs in one go, in order, before any promise job
 * it starts: a run's first output and the response that came with it then
 * save their roots in one store request (RootSaves batches until its promise
 * job runs). Work must not throw: it runs from an immediate, where an error
 * is uncaught.
 */
let queued: Array<() => void> = [];

export function afterFramesWritten(work: () => void): void {
  queued.push(work);
  if (queued.length === 1) setImmediate(() => setImmediate(runQueued));
}

function runQueued(): void {
  const works = queued;
  queued = [];
  for (const work of works) work();
}

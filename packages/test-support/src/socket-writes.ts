/**
 * Socket writes, counted: each `_write` / `_writev` of a net.Socket is one
 * write system call (or one batch of TLS records). For the tests of write
 * batching and the bench preload that counts writes per peer.
 */
import net from "node:net";

/** Calls `listener` with the socket of each write from now on; the returned function stops it. */
export function onSocketWrites(listener: (socket: net.Socket) => void): () => void {
  const write = net.Socket.prototype._write;
  const writev = net.Socket.prototype._writev!;
  net.Socket.prototype._write = function (this: net.Socket, ...args: Parameters<typeof write>) {
    listener(this);
    return write.apply(this, args);
  };
  net.Socket.prototype._writev = function (this: net.Socket, ...args: Parameters<typeof writev>) {
    listener(this);
    return writev.apply(this, args);
  };
  return () => {
    net.Socket.prototype._write = write;
    net.Socket.prototype._writev = writev;
  };
}

/** How many socket writes the process makes (on any socket) while `work` runs. */
export async function countSocketWrites(work: () => Promise<unknown>): Promise<number> {
  let writes = 0;
  const stop = onSocketWrites(() => void (writes += 1));
  try {
    await work();
  } finally {
    stop();
  }
  return writes;
}

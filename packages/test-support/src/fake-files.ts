/**
 * A stand-in for the file reader a service's loadConfig takes (ReadTextFile),
 * so configuration tests need no files on disk.
 */

/** Reads only the given files (an object is JSON-encoded); any other path fails like a missing file. */
export function fakeFiles(files: Readonly<Record<string, unknown>>): (path: string) => string {
  return (path) => {
    if (!Object.hasOwn(files, path)) throw new Error(`ENOENT: no such file, open '${path}'`);
    const content = files[path];
    return typeof content === "string" ? content : JSON.stringify(content);
  };
}

/**
 * The little of @mixmark-io/domino (a server-side DOM, the one turndown uses
 * in Node) and @joplin/turndown-plugin-gfm this adapter calls. Neither ships
 * typings for its package name, and the adapter compiles without the DOM lib,
 * so nodes are described structurally here.
 */
declare module "@mixmark-io/domino" {
  export interface DominoElement {
    readonly nodeName: string;
    readonly textContent: string | null;
    getAttribute(name: string): string | null;
    setAttribute(name: string, value: string): void;
    removeAttribute(name: string): void;
    querySelector(selector: string): DominoElement | null;
    querySelectorAll(selector: string): ArrayLike<DominoElement>;
    remove(): void;
  }
  export interface DominoDocument extends DominoElement {
    readonly title: string;
    readonly body: DominoElement | null;
    readonly documentElement: DominoElement;
  }
  const domino: { createDocument(html?: string, force?: boolean): DominoDocument };
  export default domino;
}

declare module "@joplin/turndown-plugin-gfm" {
  import type TurndownService from "turndown";
  export function gfm(service: TurndownService): void;
}

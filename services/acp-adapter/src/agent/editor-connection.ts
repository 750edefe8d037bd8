/**
 * One editor behind one bridge link (one ACP connection): its member (from
 * the link's key), what it said in initialize (capabilities, name), and the
 * client calls on it. Sessions attach to the connection that last created,
 * loaded or prompted them.
 */
import type { MemberId } from "@byok/contracts";
import type { ClientCapabilities, Implementation } from "../acp/acp-types.ts";
import type { EditorClient } from "../acp/editor-client.ts";

export class EditorConnection {
  readonly memberId: MemberId;
  readonly linkId: string;
  readonly editor: EditorClient;
  #capabilities: ClientCapabilities = {};
  #editorName: string | undefined;
  #initialized = false;
  #closed = false;

  constructor(memberId: MemberId, linkId: string, editor: EditorClient) {
    this.memberId = memberId;
    this.linkId = linkId;
    this.editor = editor;
  }

  initialized(capabilities: ClientCapabilities, info: Implementation | null | undefined): void {
    this.#capabilities = capabilities;
    this.#editorName = info === undefined || info === null ? undefined : `${info.title ?? info.name} ${info.version}`.trim();
    this.#initialized = true;
  }

  get capabilities(): ClientCapabilities {
    return this.#capabilities;
  }

  get editorName(): string | undefined {
    return this.#editorName;
  }

  get isInitialized(): boolean {
    return this.#initialized;
  }

  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    this.#closed = true;
  }
}

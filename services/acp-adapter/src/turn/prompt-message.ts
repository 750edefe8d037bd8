/**
 * A session/prompt's content -> the canonical user message of the run.
 * - text: a text part, exactly as typed (session/load shows it back as is);
 * - image: an image part (the model must accept images; promptCapabilities.image);
 * - resource_link: a text part naming the file, which the model may read with read_file;
 * - resource (embedded context): its text in an `<attached_file>` part, or, for
 *   blob resources, an image part when it is an image; other blobs are named only;
 * - audio is not offered (promptCapabilities.audio is false) and is refused.
 * The message's client id is the run's fallback (`user:<run_id>`): ACP v1 gives
 * user messages no id of their own.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ContentPartSchema, fallbackUserMessageClientId, MessageSchema, UserOrigin, type Message, type RunId } from "@byok/contracts";
import type { ContentBlock } from "../acp/acp-types.ts";

export class PromptContentError extends Error {
  override readonly name = "PromptContentError";
}

/** The prompt as a user message; throws PromptContentError for content this agent does not take. */
export function promptMessage(runId: RunId, prompt: readonly ContentBlock[]): Message {
  const content: MessageInitShape<typeof ContentPartSchema>[] = [];
  const text = (value: string) => content.push({ part: { case: "text", value: { text: value } } });
  for (const block of prompt) {
    switch (block.type) {
      case "text":
        if (block.text !== "") text(block.text);
        break;
      case "image":
        content.push({ part: { case: "image", value: { mimeType: block.mimeType, data: Buffer.from(block.data, "base64") } } });
        break;
      case "resource_link":
        text(`<file_reference name=${JSON.stringify(block.name)} uri=${JSON.stringify(block.uri)} />`);
        break;
      case "resource": {
        const r = block.resource;
        if ("text" in r) text(`<attached_file uri=${JSON.stringify(r.uri)}>\n${r.text}\n</attached_file>`);
        else if ((r.mimeType ?? "").startsWith("image/")) content.push({ part: { case: "image", value: { mimeType: r.mimeType ?? "image/png", data: Buffer.from(r.blob, "base64") } } });
        else text(`<file_reference uri=${JSON.stringify(r.uri)} note="binary content not shown" />`);
        break;
      }
      case "audio":
        throw new PromptContentError("audio prompts are not supported by this agent");
      default: {
        const unreachable: never = block;
        throw new PromptContentError(`unknown prompt content ${JSON.stringify(unreachable)}`);
      }
    }
  }
  if (content.length === 0) throw new PromptContentError("the prompt is empty");
  return create(MessageSchema, { body: { case: "user", value: { clientId: fallbackUserMessageClientId(runId), origin: UserOrigin.USER, content } } });
}

/** A session title from the first prompt: its first line of text, at most 80 characters. */
export function titleOf(prompt: readonly ContentBlock[]): string | undefined {
  for (const block of prompt) {
    if (block.type !== "text") continue;
    const line = block.text.trim().split("\n")[0]?.trim() ?? "";
    if (line !== "") return line.length > 80 ? `${line.slice(0, 77)}...` : line;
  }
  return undefined;
}

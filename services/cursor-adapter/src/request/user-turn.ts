/**
 * The member's message for this run as a canonical user message: the text in
 * `<user_query>` tags plus the selected images (inline data, or fetched by blob
 * id). client_id is Cursor's message_id.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ContentPartSchema, MessageSchema, UserOrigin, type Message } from "@byok/contracts";
import type { agent } from "@byok/cursor-protocol";

export function userQueryText(text: string): string {
  return `<user_query>\n${text}\n</user_query>`;
}

/** Image blob ids the message references without inline data. */
export function imageBlobIdsToFetch(message: agent.UserMessage): Uint8Array[] {
  return (message.selectedContext?.selectedImages ?? [])
    .filter((image) => (image.data === undefined || image.data.length === 0) && image.blobId.length > 0)
    .map((image) => image.blobId);
}

export function userTurnMessage(
  message: agent.UserMessage,
  fallbackClientId: string,
  imageBlob: (blobId: Uint8Array) => Uint8Array | undefined,
): Message {
  const content: MessageInitShape<typeof ContentPartSchema>[] = [{ part: { case: "text", value: { text: userQueryText(message.text) } } }];
  for (const image of message.selectedContext?.selectedImages ?? []) {
    const data = image.data !== undefined && image.data.length > 0 ? image.data : imageBlob(image.blobId);
    if (data === undefined) continue;
    content.push({ part: { case: "image", value: { mimeType: image.mimeType ?? sniffImageType(data), data } } });
  }
  return create(MessageSchema, {
    body: {
      case: "user",
      value: { clientId: message.messageId !== "" ? message.messageId : fallbackClientId, origin: UserOrigin.USER, content },
    },
  });
}

/** Cursor sends mime_type; when it does not, recognise the common formats by their magic bytes. */
function sniffImageType(data: Uint8Array): string {
  const starts = (...bytes: number[]) => bytes.every((b, i) => data[i] === b);
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (starts(0x52, 0x49, 0x46, 0x46) && data[8] === 0x57 && data[9] === 0x45 && data[10] === 0x42 && data[11] === 0x50) return "image/webp";
  return "image/png";
}

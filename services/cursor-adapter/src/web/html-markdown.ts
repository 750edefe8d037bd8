/**
 * HTML -> Markdown for WebFetch, with turndown (the widely used converter;
 * its GitHub-flavoured plugin adds tables and strike-through) on domino's
 * server-side DOM. Only the text a reader needs is kept: the page's main
 * content when it marks one (<main>, <article>, role=main), without scripts,
 * styles, forms, embedded frames or images (an image's alt text stays); links
 * become absolute so the model can fetch them. CPU work: it runs in a worker
 * pool (page-conversion.ts), never on the adapter's event loop.
 */
import domino, { type DominoElement } from "@mixmark-io/domino";
import { gfm } from "@joplin/turndown-plugin-gfm";
import TurndownService from "turndown";

export interface ConvertedPage {
  title: string;
  markdown: string;
}

const DROPPED = ["script", "style", "noscript", "template", "iframe", "frame", "object", "embed", "svg", "canvas", "form", "button", "select", "textarea", "input", "link", "meta"];
const MAIN_SELECTORS = ["main", "[role=main]", "article"];

let service: TurndownService | undefined;

function converter(): TurndownService {
  if (service !== undefined) return service;
  const created = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "_" });
  created.use(gfm);
  created.remove(DROPPED as TurndownService.Filter);
  created.addRule("image-alt-text", {
    filter: "img",
    replacement: (_content, node) => {
      const alt = ((node as unknown as DominoElement).getAttribute("alt") ?? "").trim();
      return alt === "" ? "" : `[image: ${alt}]`;
    },
  });
  service = created;
  return created;
}

export function htmlToMarkdown(html: string, pageUrl: string): ConvertedPage {
  const document = domino.createDocument(html);
  const title = (document.title ?? "").replace(/\s+/g, " ").trim();
  for (const element of Array.from(document.querySelectorAll(DROPPED.join(",")))) element.remove();
  // Links become absolute; links that lead nowhere fetchable keep only their text.
  for (const link of Array.from(document.querySelectorAll("a[href]"))) {
    const href = absolute(link.getAttribute("href") ?? "", pageUrl);
    if (href === undefined) link.removeAttribute("href");
    else link.setAttribute("href", href);
  }
  const root = MAIN_SELECTORS.map((s) => document.querySelector(s)).find((e) => e !== null) ?? document.body ?? document.documentElement;
  const markdown = converter().turndown(root as unknown as TurndownService.Node);
  return { title, markdown: tidy(markdown) };
}

/** Plain text formats pass through; JSON is indented when it parses. */
export function textToMarkdown(text: string, mediaType: string): ConvertedPage {
  if (mediaType === "application/json" || mediaType.endsWith("+json")) {
    try {
      return { title: "", markdown: `\`\`\`json\n${JSON.stringify(JSON.parse(text), null, 2)}\n\`\`\`` };
    } catch {
      // not JSON after all: as text
    }
  }
  return { title: "", markdown: tidy(text) };
}

/** http(s) links only; fragments and script links are not worth a link. */
function absolute(href: string, base: string): string | undefined {
  if (href.startsWith("#")) return undefined;
  try {
    const url = new URL(href, base);
    return url.protocol === "http:" || url.protocol === "https:" ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}

function tidy(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

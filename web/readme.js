// The dataset card: the metadata's `readme` (Markdown, as the operators wrote it) turned into
// HTML by marked and sanitised by DOMPurify, both from npm (web/package.json) and served under
// /vendor/ as published. The dataset page imports this module only for a dataset that has a
// card, so a page without one loads neither library. What is kept and why: docs/security.md,
// "The dataset card".
import { Marked } from "./vendor/marked/marked.esm.js";
// DOMPurify's minified browser build (12 KB gzipped, against 23 KB for its ES module, and less
// to parse): a UMD file, which, imported, finds neither `exports` nor `define` and sets
// `globalThis.DOMPurify`.
import "./vendor/dompurify/purify.min.js";
import { h } from "./dom.js";

const { DOMPurify } = globalThis;

/** Every link's `rel`: no access to this page from the one opened, no referrer, and no
 * endorsement of the target (a card is the operators' text, its links not vouched for). */
export const LINK_REL = "noopener noreferrer nofollow";

/** The URLs a link may keep: http(s), mailto, or a path or fragment on this site. Any other
 * scheme (javascript:, data:, vbscript:, file:, …) is dropped with its attribute. DOMPurify
 * tests it after taking out whitespace and control characters, so `java\tscript:` is caught. */
const ALLOWED_URI = /^(?:(?:https?|mailto):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i;

const PURIFY = {
  // HTML only: no SVG or MathML (and their namespace tricks).
  USE_PROFILES: { html: true },
  ALLOWED_URI_REGEXP: ALLOWED_URI,
  // Nothing that runs, loads, submits or takes input; no styles (the page's policy forbids
  // them inline anyway), no frames, no media that would fetch from elsewhere.
  FORBID_TAGS: ["style", "link", "meta", "base", "form", "input", "button", "textarea", "select",
    "option", "iframe", "frame", "object", "embed", "video", "audio", "source", "track",
    "picture", "template", "dialog"],
  // No styles; no ids or names (they could shadow the page's own, which it finds by id), no
  // classes (the page's styles are not the card's), no targets (links open in this tab).
  FORBID_ATTR: ["style", "id", "name", "class", "target", "srcset", "ping", "formaction",
    "action", "background", "poster"],
  ALLOW_DATA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
};

/** HTML written in the card is shown as the text it is, never parsed: marked's `html` tokens
 * (blocks and inline tags alike) escaped. Parsing it, even in DOMPurify's inert document, would
 * apply the page's policy to it (an inline style or a <base> is reported as a violation). */
const renderer = {
  html({ text, block }) {
    const escaped = text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    return block ? `<p>${escaped}</p>` : escaped;
  },
};

/** The card's HTML as a fragment of this document: Markdown (GitHub's flavour: tables, task
 * lists, strikethrough; HTML in it as text) rendered, then sanitised, then made to fit the page: its headings
 * under the page's (a card's `#` is an <h3>), every link with {@link LINK_REL}, images shown
 * as links to them (https only) or their text, and each table in a box of its own that
 * scrolls. */
export function renderCard(markdown) {
  const html = new Marked({ gfm: true, breaks: false, async: false, renderer }).parse(markdown);
  const fragment = DOMPurify.sanitize(html, PURIFY);
  for (const heading of fragment.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
    const level = Math.min(6, Number(heading.tagName[1]) + 2);
    const lower = document.createElement(`h${level}`);
    lower.append(...heading.childNodes);
    heading.replaceWith(lower);
  }
  // Images are not loaded: the page's policy allows images of this site only, and an image
  // from elsewhere would tell its host who reads the page. One over https becomes a link to it.
  for (const image of fragment.querySelectorAll("img")) {
    const src = image.getAttribute("src") ?? "";
    const alt = image.getAttribute("alt") ?? "";
    image.replaceWith(/^https:\/\//i.test(src)
      ? h("a", { href: src, class: "card-image" }, `Image: ${alt || src}`)
      : alt);
  }
  // A link whose URL was refused is its text alone.
  for (const link of fragment.querySelectorAll("a")) {
    if (link.hasAttribute("href")) link.setAttribute("rel", LINK_REL);
    else link.replaceWith(...link.childNodes);
  }
  for (const table of fragment.querySelectorAll("table")) {
    const box = h("div", { class: "card-table", tabindex: "0", role: "region", "aria-label": "Table in the dataset card" });
    table.replaceWith(box);
    box.append(table);
  }
  return fragment;
}


// Building the page: elements, the header's account links, the access badge, a copy button, an
// organisation's dataset's organisation.
import { api } from "./api.js";
import { humanDate, humanDuration } from "./format.js";
import { isOperator, session, signOut, storedSession } from "./session.js";

/** Builds an element: `h("a", {href: "/"}, "text", child, ...)`. Text is never parsed as HTML. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : value);
  }
  return fill(element, ...children);
}

/** The children `h` and `fill` keep: arrays flattened, nothing for null, undefined or false
 * (the DOM's own `append` and `replaceChildren` would write "null"). */
function kept(children) {
  return children.flat(Infinity)
    .filter((child) => child !== null && child !== undefined && child !== false)
    .map((child) => (child instanceof Node ? child : String(child)));
}

/** Replaces an element's children, as `h` builds them: `fill(list, a ? item : null, ...)`. */
export function fill(element, ...children) {
  element.replaceChildren(...kept(children));
  return element;
}

/** The header's account links: the page's own "Sign in" and "Sign up", or (signed in) "Access
 * requests" for operators, "API keys", the email and "Sign out". */
export async function header() {
  const slot = document.getElementById("account-nav");
  if (!slot) return;
  let s;
  try {
    s = await session();
  } catch {
    // Cognito could not be reached: the session is kept, and so is its header.
    s = storedSession();
  }
  if (!s) {
    // No session, or one that has ended: the page's own links.
    slot.replaceChildren(h("a", { href: "account.html" }, "Sign in"), h("a", { href: "account.html#sign-up" }, "Sign up"));
    return;
  }
  slot.replaceChildren(
    (await isOperator(s)) ? h("a", { href: "operators.html" }, "Access requests") : "",
    h("a", { href: "account.html" }, "API keys"),
    h("span", { class: "who" }, s.email),
    h("button", {
      class: "secondary",
      type: "button",
      onclick: async () => {
        await signOut();
        location.href = "account.html";
      },
    }, "Sign out"),
  );
}

/** The access badge: keyless while the window is open, else "approval needed" or "key required". */
export function accessBadge(keylessUntil, level = "registered", now = Date.now()) {
  const until = keylessUntil ? Date.parse(keylessUntil) : 0;
  if (until > now) {
    return h("span", { class: "badge", title: `keyless until ${humanDate(keylessUntil)}` },
      `Keyless · ${humanDuration(until - now)} left`);
  }
  if (level === "approval") {
    return h("span", { class: "badge gated", title: "read with a key of an account granted access" },
      "Approval needed");
  }
  return h("span", { class: "badge gated" }, "Key required");
}

/** Copies text, saying so on the button for a moment. */
export async function copy(button, text) {
  try {
    await navigator.clipboard.writeText(text);
    const before = button.textContent;
    button.textContent = "Copied";
    setTimeout(() => { button.textContent = before; }, 1500);
  } catch {
    button.textContent = "Select and copy";
  }
}

/** The organisation of an organisation's dataset (`acme~sales` → `acme`), or null for a dataset
 * of the catalog itself (docs/organisations.md). */
export function orgOf(slug) {
  const at = String(slug).indexOf("~");
  return at > 0 ? slug.slice(0, at) : null;
}

/** A slug as a person reads it: `acme / sales` for an organisation's dataset, else the slug. */
export function slugText(slug) {
  const org = orgOf(slug);
  return org ? `${org} / ${slug.slice(org.length + 1)}` : slug;
}

let linkable;

/** The organisations whose page the signed-in person may open (theirs; every one for an
 * operator: `"*"`), asked once a page and only when `slugs` name an organisation's dataset;
 * empty when signed out or when the API cannot tell. */
export async function orgPages(slugs) {
  if (!slugs.some(orgOf) || !storedSession()) return new Set();
  linkable ??= (async () => {
    try {
      const s = await session();
      if (!s) return new Set();
      if (await isOperator(s)) return new Set(["*"]);
      const body = await api("/account/orgs", { token: s.accessToken });
      return new Set(body.orgs.map((m) => m.org));
    } catch {
      return new Set();
    }
  })();
  return linkable;
}

/** What goes before an organisation's dataset's name: its organisation and a slash, the
 * organisation a link to its page for those who may open it (`pages`: from `orgPages`); nothing
 * for a dataset of the catalog itself. */
export function orgMark(slug, pages = new Set()) {
  const org = orgOf(slug);
  if (!org) return null;
  const name = pages.has(org) || pages.has("*")
    ? h("a", { href: `org.html?name=${encodeURIComponent(org)}` }, org)
    : h("span", {}, org);
  return h("span", { class: "org-mark" }, name, " / ");
}

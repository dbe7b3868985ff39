// Building the page: elements, the header's account links, the access badge, a copy button.
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

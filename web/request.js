// Access to datasets shared by approval: the person's standing in a sentence, the dataset
// page's request form (the operators' questions, each with its limit, and the terms), and
// withdrawing a pending request.
import { api, explain } from "./api.js";
import { h } from "./dom.js";
import { humanDate } from "./format.js";
import { session } from "./session.js";

/** A sentence for an access record (`undefined`: the person never asked). */
export function standing(record) {
  switch (record?.status) {
    case "pending": return `Your request is pending (asked ${humanDate(record.requested_at)}): an operator will decide.`;
    case "granted": return record.expires_at ? `You have access until ${humanDate(record.expires_at)}.` : "You have access.";
    case "expired": return `Your access ended ${humanDate(record.expires_at)}. You may ask again.`;
    case "rejected": return `Your request was rejected: ${record.reason ?? "no reason given"}. You may ask again.`;
    case "revoked": return "Your access was revoked. You may ask again.";
    case "withdrawn": return "You withdrew your request. You may ask again.";
    default: return "You have not asked for access yet.";
  }
}

/** The signed-in person's access records, or null when signed out. */
export async function myAccess() {
  const s = await session();
  if (!s) return null;
  return (await api("/account/access", { token: s.accessToken })).access;
}

function requestForm(d, onDone) {
  const policy = d.access;
  const result = h("p", { "aria-live": "polite" });
  const questions = (policy.form ?? []).map((q) => {
    const id = `answer-${q.name}`;
    return h("div", {},
      h("label", { for: id }, q.label, q.required === false ? " (optional)" : "", ` · at most ${q.max_length} characters`),
      h("textarea", { id, name: q.name, rows: 2, maxlength: q.max_length, required: q.required !== false }));
  });
  const terms = policy.terms
    ? [h("h3", {}, "Terms"), h("p", { class: "terms" }, policy.terms),
      h("label", { class: "choice" }, h("input", { type: "checkbox", id: "accept-terms", name: "accept", required: true }), "I accept these terms")]
    : [];
  const button = h("button", { type: "submit" }, "Ask for access");
  const form = h("form", {
    class: "stack", id: "access-request",
    onsubmit: async (event) => {
      event.preventDefault();
      const s = await session();
      if (!s) {
        result.replaceChildren(h("span", { class: "error", role: "alert" }, "Your session has ended. Please sign in again."));
        return;
      }
      const answers = {};
      for (const q of policy.form ?? []) {
        const text = form.elements[q.name].value.trim();
        if (text) answers[q.name] = text;
      }
      button.disabled = true;
      try {
        const created = await api("/account/access", {
          method: "POST", token: s.accessToken,
          body: { dataset: d.slug, answers, accept_terms: Boolean(form.elements.accept?.checked) },
        });
        onDone(created.access);
      } catch (error) {
        result.replaceChildren(h("span", { class: "error", role: "alert" }, explain(error)));
      } finally {
        button.disabled = false;
      }
    },
  }, ...questions, ...terms, h("div", {}, button), result);
  return form;
}

/** The dataset page's access section (datasets at the `approval` level only). */
export async function accessPanel(d) {
  const automatic = d.access.approval === "automatic";
  const section = h("section", { class: "panel", id: "access", "aria-labelledby": "access-title" },
    h("h2", { id: "access-title" }, "Access"),
    h("p", {}, "This dataset is shared by approval: ",
      automatic ? "requests are approved at once." : "the catalog's operators decide each request."));
  const s = await session();
  if (!s) {
    section.append(h("p", {}, h("a", { href: "account.html" }, "Sign in"), " to ask for access."));
    return section;
  }
  const state = h("p", { id: "access-state", role: "status" }, "Checking your access…");
  const slot = h("div");
  section.append(state, slot);
  const show = (record) => {
    state.textContent = standing(record);
    if (record?.status === "pending") {
      slot.replaceChildren(h("button", {
        type: "button", class: "secondary",
        onclick: async () => {
          try {
            const now = await session();
            await api(`/account/access/${encodeURIComponent(d.slug)}`, { method: "DELETE", token: now?.accessToken });
            show({ ...record, status: "withdrawn" });
          } catch (error) {
            state.replaceChildren(h("span", { class: "error", role: "alert" }, explain(error)));
          }
        },
      }, "Withdraw my request"));
    } else if (record?.status === "granted") {
      slot.replaceChildren();
    } else {
      slot.replaceChildren(requestForm(d, show));
    }
  };
  try {
    const records = await myAccess();
    show(records?.find((r) => r.dataset === d.slug));
  } catch (error) {
    state.replaceChildren(h("span", { class: "error" }, explain(error)));
  }
  return section;
}

// The account page's organisations (docs/site.md): the person's organisations, each linked to its
// page with their role (and, for an admin, its access requests), and the invitations made for
// their verified email address, each accepted or declined here.
import { api, explain } from "./api.js";
import { h } from "./dom.js";
import { humanDate } from "./format.js";

const ROLES = { member: "member", editor: "editor", admin: "admin" };

/** Fills the two lists; `token()` gives the session's access token, `say(text, error)` speaks,
 * `failed(error)` takes a refusal of the session. */
export async function showMemberships(token, say, failed) {
  const [orgs, invitations] = await Promise.all([
    api("/account/orgs", { token: await token() }),
    api("/account/invitations", { token: await token() }),
  ]);
  const link = (org) => h("a", { href: `org.html?name=${encodeURIComponent(org)}` }, org);
  document.getElementById("orgs-list").replaceChildren(...(orgs.orgs.length
    ? orgs.orgs.map((m) => h("li", {}, link(m.org), `: your role is ${ROLES[m.role] ?? m.role}`,
      m.role === "admin"
        ? [" · ", h("a", { href: `operators.html?org=${encodeURIComponent(m.org)}` }, `Access requests of ${m.org}`)]
        : null))
    : [h("li", {}, "You belong to no organisation.")]));
  const answer = (invitation, accept) => async (event) => {
    const button = event.currentTarget;
    button.disabled = true;
    try {
      await api(`/account/invitations/${encodeURIComponent(invitation.org)}`, { method: accept ? "POST" : "DELETE", token: await token() });
      await showMemberships(token, say, failed);
      say(accept ? `You joined ${invitation.org} as ${ROLES[invitation.role] ?? invitation.role}.` : `You declined the invitation of ${invitation.org}.`);
    } catch (error) {
      button.disabled = false;
      if (error.code === "session" || error.code === "invalid_token") await failed(error);
      else say(explain(error), true);
    }
  };
  const section = document.getElementById("invitations-section");
  section.hidden = invitations.invitations.length === 0;
  document.getElementById("invitations-list").replaceChildren(...invitations.invitations.map((i) => h("li", {},
    h("strong", {}, i.org), ` invites you as ${ROLES[i.role] ?? i.role}`,
    h("p", { class: "meta" }, h("span", {}, `by ${i.invited_by}`), h("span", {}, `open until ${humanDate(i.expires_at)}`)),
    h("div", { class: "row" },
      h("button", { type: "button", "aria-label": `Accept the invitation of ${i.org}`, onclick: answer(i, true) }, "Accept"),
      h("button", { type: "button", class: "secondary", "aria-label": `Decline the invitation of ${i.org}`, onclick: answer(i, false) }, "Decline")))));
}

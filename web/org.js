// The organisations' page (docs/site.md). `org.html?name=acme`: one organisation, its members and
// their roles; its admins (and the catalog's operators) change a role, remove a member, invite an
// address with a role and withdraw an invitation; a member leaves. `org.html`: the person's
// organisations, and for operators every organisation and a form to create one. What each person
// sees is what the API answers them: a stranger gets the 404 of a name that names nothing.
import { api, explain } from "./api.js";
import { h, header } from "./dom.js";
import { humanDate, humanNumber } from "./format.js";
import { accountOf, isOperator, session } from "./session.js";

const name = new URLSearchParams(location.search).get("name")?.trim() ?? "";
const ROLES = { member: "Member", editor: "Editor", admin: "Admin" };
const LEVELS = { private: "Private", approval: "Approval needed", registered: "Key required" };
const NOT_FOUND = "Not found: no organisation by this name has you as a member.";

const status = document.getElementById("status");
const say = (text, error = false) =>
  status.replaceChildren(error ? h("span", { class: "error", role: "alert" }, text) : text);
const $ = (id) => document.getElementById(id);

/** An API refusal in words: the organisation's refusals in the API's own sentence (`error`),
 * the session's and the network's as everywhere on the site. */
function sentence(error) {
  return error.code === "not_found" ? NOT_FOUND : explain(error);
}

async function token() {
  const s = await session();
  if (!s) throw Object.assign(new Error("Your session has ended. Please sign in again."), { code: "session" });
  return s.accessToken;
}

/** Asks the confirmation dialog; resolves to whether the person confirmed. */
function confirmed(title, text, yes) {
  const dialog = $("confirm-dialog");
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-yes").textContent = yes;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true }));
}

/** Runs a change, then shows the organisation again and says `done` (or the refusal). */
async function change(send, done) {
  try {
    await send(await token());
  } catch (error) {
    say(sentence(error), true);
    return false;
  }
  await showOne(false);
  say(done);
  return true;
}

const memberPath = (account) => `/orgs/${encodeURIComponent(name)}/members/${encodeURIComponent(account)}`;

function memberRow(m, me, manages, orgTitle) {
  const who = m.email ?? m.account;
  const mine = m.account === me;
  let role = ROLES[m.role] ?? m.role;
  if (manages) {
    const select = h("select", { id: `role-${m.account}`, "aria-label": `Role of ${who}` },
      Object.entries(ROLES).map(([value, label]) => h("option", { value, selected: value === m.role }, label)));
    role = h("form", {
      class: "row role-change",
      onsubmit: (event) => {
        event.preventDefault();
        const wanted = select.value;
        change((t) => api(memberPath(m.account), { method: "PUT", token: t, body: { role: wanted } }),
          `${who} is now ${ROLES[wanted].toLowerCase()}.`);
      },
    }, select, h("button", { type: "submit", class: "secondary", "aria-label": `Save the role of ${who}` }, "Save"));
  }
  let action = null;
  if (mine) {
    action = h("button", {
      type: "button", class: "danger",
      onclick: async () => {
        if (!(await confirmed(`Leave ${orgTitle}?`, "You will no longer read its datasets or see its members. Only an admin can invite you back.", "Leave"))) return;
        try {
          await api(memberPath(m.account), { method: "DELETE", token: await token() });
        } catch (error) {
          say(sentence(error), true);
          return;
        }
        $("one").hidden = true;
        $("standing").textContent = "";
        say(`You left ${orgTitle}.`);
      },
    }, "Leave");
  } else if (manages) {
    action = h("button", {
      type: "button", class: "danger", "aria-label": `Remove ${who}`,
      onclick: async () => {
        if (!(await confirmed(`Remove ${who}?`, `${who} will no longer be a member of ${orgTitle}: from their next request they read nothing of its datasets that a stranger could not.`, "Remove"))) return;
        change((t) => api(memberPath(m.account), { method: "DELETE", token: t }), `Removed ${who}.`);
      },
    }, "Remove");
  }
  return h("tr", { "data-account": m.account },
    h("td", { "data-label": "Member" }, who, mine ? " (you)" : null),
    h("td", { "data-label": "Role" }, role),
    h("td", { "data-label": "Added" }, humanDate(m.added_at)),
    h("td", {}, action));
}

function invitationItem(i) {
  return h("li", { "data-invitation": i.id },
    h("strong", {}, i.email), ` · ${ROLES[i.role] ?? i.role}`,
    h("p", { class: "meta" },
      h("span", {}, `invited ${humanDate(i.invited_at)} by ${i.invited_by}`),
      h("span", {}, `expires ${humanDate(i.expires_at)}`)),
    h("button", {
      type: "button", class: "secondary", "aria-label": `Withdraw the invitation of ${i.email}`,
      onclick: () => change(
        (t) => api(`/orgs/${encodeURIComponent(name)}/invitations/${encodeURIComponent(i.id)}`, { method: "DELETE", token: t }),
        `Withdrew the invitation of ${i.email}.`),
    }, "Withdraw"));
}

/** One organisation, as the API shows it to the caller. `first`: the page's first load (it says
 * what it loaded); after a change the change's sentence is said instead. */
async function showOne(first = true) {
  const s = await session();
  if (!s) {
    status.replaceChildren(h("a", { href: "account.html" }, "Sign in"), " to see your organisations.");
    return;
  }
  let body;
  try {
    body = await api(`/orgs/${encodeURIComponent(name)}`, { token: s.accessToken });
  } catch (error) {
    $("one").hidden = true;
    $("title").textContent = error.code === "not_found" ? "Organisation not found" : "Organisation";
    say(sentence(error), true);
    return;
  }
  const { org, role, members } = body;
  const manages = Array.isArray(body.invitations);
  const me = accountOf(s);
  const title = org.display_name || org.name;
  document.title = `${title} · Dataset catalog`;
  $("title").replaceChildren(title, " ", h("code", {}, org.name));
  $("standing").textContent = role
    ? `Your role: ${ROLES[role] ?? role}. ${humanNumber(members.length)} member${members.length === 1 ? "" : "s"}.`
    : `You see this organisation as one of the catalog's operators. ${humanNumber(members.length)} member${members.length === 1 ? "" : "s"}.`;
  const focused = document.activeElement?.id;
  $("members").replaceChildren(...members.map((m) => memberRow(m, me, manages, title)));
  $("manage").hidden = !manages;
  if (manages) {
    const open = body.invitations;
    $("invitations").replaceChildren(...(open.length
      ? open.map(invitationItem)
      : [h("li", {}, "No open invitation.")]));
  }
  await showDatasets(s.accessToken, !role || role === "editor" || role === "admin");
  $("one").hidden = false;
  // A control that was redrawn keeps the focus (a role's select); one that is gone gives it to
  // the members' heading, so that the keyboard goes on from there.
  if (focused && $(focused)) $(focused).focus();
  else if (!first && !document.activeElement?.closest("form")) $("members-title").focus();
  if (first) say("");
}

/** The organisation's datasets, private ones included (its members and the operators), each
 * linked to its page; for its editors, admins and the operators, the form that publishes a new
 * one from a file (upload.js, loaded when a name is given). */
async function showDatasets(accessToken, publishes) {
  const list = $("org-datasets");
  try {
    const { datasets } = await api(`/orgs/${encodeURIComponent(name)}/datasets`, { token: accessToken });
    list.replaceChildren(...(datasets.length
      ? datasets.map((d) => h("li", {},
        h("a", { href: `dataset.html?slug=${encodeURIComponent(d.slug)}` }, d.name || d.slug), " ",
        h("span", { class: "badge" }, d.unpublished ? "Unpublished" : LEVELS[d.access_level] ?? d.access_level),
        d.description ? h("span", { class: "muted" }, ` ${d.description}`) : ""))
      : [h("li", {}, "No dataset yet.")]));
  } catch (error) {
    list.replaceChildren(h("li", { class: "error" }, sentence(error)));
  }
  $("new-dataset").hidden = !publishes;
}

$("new-dataset").addEventListener("submit", async (event) => {
  event.preventDefault();
  const dataset = event.target.elements.dataset.value.trim();
  const slug = `${name}~${dataset}`;
  const slot = $("new-dataset-upload");
  try {
    const { uploadForm } = await import("./upload.js");
    slot.replaceChildren(h("h3", {}, `New dataset ${slug}`),
      uploadForm(slug, token, async () => { location.href = `dataset.html?slug=${encodeURIComponent(slug)}`; }));
  } catch (error) {
    slot.replaceChildren(h("p", { class: "error" }, `The upload form could not load (${error.message}).`));
  }
});

$("invite").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const email = form.elements.email.value.trim();
  const role = form.elements.role.value;
  const ok = await change((t) => api(`/orgs/${encodeURIComponent(name)}/invitations`, { method: "POST", token: t, body: { email, role } }),
    `Invited ${email} as ${ROLES[role].toLowerCase()}.`);
  if (ok) form.reset();
});

/** `org.html` without a name: the person's organisations; for operators, every one. */
async function showIndex() {
  const s = await session();
  $("index").hidden = false;
  if (!s) {
    status.replaceChildren(h("a", { href: "account.html" }, "Sign in"), " to see your organisations.");
    return;
  }
  const operator = await isOperator(s);
  try {
    const mine = new Map((await api("/account/orgs", { token: s.accessToken })).orgs.map((m) => [m.org, m.role]));
    const all = operator ? (await api("/orgs", { token: s.accessToken })).orgs : [...mine.keys()].map((n) => ({ name: n }));
    const link = (o) => h("a", { href: `org.html?name=${encodeURIComponent(o.name)}` }, o.display_name ?? o.name);
    $("org-list").replaceChildren(...(all.length
      ? all.map((o) => h("li", {}, link(o), o.display_name && o.display_name !== o.name ? [" ", h("code", {}, o.name)] : null,
        mine.has(o.name) ? ` · your role: ${ROLES[mine.get(o.name)]}` : null,
        Number.isInteger(o.members) ? ` · ${humanNumber(o.members)} member${o.members === 1 ? "" : "s"}` : null))
      : [h("li", {}, "You belong to no organisation. An admin invites you; the invitation shows on your account page.")]));
    $("create").hidden = !operator;
    say("");
  } catch (error) {
    say(sentence(error), true);
  }
}

$("create").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const body = { name: form.elements.name.value.trim() };
  const shown = form.elements.display.value.trim();
  if (shown) body.display_name = shown;
  try {
    await api("/orgs", { method: "POST", token: await token(), body });
  } catch (error) {
    say(sentence(error), true);
    return;
  }
  location.href = `org.html?name=${encodeURIComponent(body.name)}`;
});

header();
if (name) {
  $("title").textContent = name;
  showOne().catch((error) => say(sentence(error), true));
} else {
  showIndex();
}

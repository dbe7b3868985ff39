// The operators' page: access records in one status (pending by default), with who asked, what
// they answered, and the decisions: approve (optionally until a date), reject with a reason,
// revoke a grant. Each decision is sent with the record's revision, so that it applies only to
// what the operator saw. The catalog's operators see every dataset's records; an organisation's
// admin sees its datasets' (`?org=`), one of the organisations they administer at a time, chosen
// above the list (the page's `?org=` first); anyone else is told the page is not for them.
//
// On a slow network: only the latest list asked for is shown (an earlier one answered later is
// dropped); while a list loads, the one shown stays readable but its buttons are disabled; what
// the operator typed (an Until date, a reason) is carried onto the new list's card of the same
// record, and a decision answered after a list was asked for wins over that list's older copy
// of the record (by its revision).
import { api, explain } from "./api.js";
import { h, header, slugText } from "./dom.js";
import { humanDate } from "./format.js";
import { isOperator, session } from "./session.js";

const status = document.getElementById("status");
const list = document.getElementById("records");
const filter = document.getElementById("filter");
const orgChoice = document.getElementById("org-choice");
const scope = document.getElementById("scope");
const NEITHER = "This page is for the catalog's operators and the admins of an organisation.";
const say = (text, error = false) =>
  status.replaceChildren(error ? h("span", { class: "error", role: "alert" }, text) : text);

/** A record's key: its dataset and account. */
const keyOf = (record) => `${record.dataset}/${record.grantee}`;
// The number of the latest list asked for; only its answer is shown.
let latest = 0;
// Whether a list is loading: the cards' buttons are disabled meanwhile.
let loading = false;
// Records as the decisions made on this page answered them, by key: newer (a higher `rev`)
// than a list fetched before the decision was.
const decided = new Map();
// Each dataset's questions (its metadata's `access.form`), by slug: name → the question asked.
const questions = new Map();

/** The questions of `slug`'s request form, by name (an empty map when they cannot be read:
 * the answers are then labelled by their names). */
function questionsOf(slug) {
  if (!questions.has(slug)) {
    questions.set(slug, api(`/datasets/${encodeURIComponent(slug)}`)
      .then((d) => new Map((d.access?.form ?? []).map((q) => [q.name, q.label])))
      .catch(() => new Map()));
  }
  return questions.get(slug);
}

// Who the signed-in person decides for: `{ operator: true }`, or the organisations they
// administer (`{ operator: false, orgs: [...] }`), asked once a page.
let standing = null;

/** The person's standing, and (an admin's) the choice of organisation filled once. */
async function deciderOf(s) {
  standing ??= (async () => {
    if (await isOperator(s)) return { operator: true, orgs: [] };
    const { orgs } = await api("/account/orgs", { token: s.accessToken });
    const mine = orgs.filter((m) => m.role === "admin").map((m) => m.org);
    const select = filter.elements.org;
    const wanted = new URLSearchParams(location.search).get("org");
    select.replaceChildren(...mine.map((org) => h("option", { value: org, selected: org === wanted }, org)));
    orgChoice.hidden = mine.length === 0;
    if (mine.length) {
      scope.hidden = false;
      scope.textContent = `As an admin you decide the requests for the datasets of ${mine.join(", ")}.`;
    }
    return { operator: false, orgs: mine };
  })().catch((error) => {
    standing = null;
    throw error;
  });
  return standing;
}

/** Disables (or enables again) every decision's button on the list. */
function busy(on) {
  loading = on;
  for (const button of list.querySelectorAll("button")) button.disabled = on;
  if (on) list.setAttribute("aria-busy", "true");
  else list.removeAttribute("aria-busy");
}

async function decide(record, body) {
  const s = await session();
  if (!s) throw Object.assign(new Error("signed out"), { code: "session" });
  const path = `/operator/access/${encodeURIComponent(record.dataset)}/${encodeURIComponent(record.grantee)}`;
  return (await api(path, { method: "POST", token: s.accessToken, body: { ...body, rev: record.rev } })).access;
}

function statusText(record) {
  switch (record.status) {
    case "granted": return record.expires_at ? `Granted until ${humanDate(record.expires_at)}` : "Granted until revoked";
    case "expired": return `Expired ${humanDate(record.expires_at)}`;
    case "rejected": return `Rejected: ${record.reason ?? ""}`;
    default: return record.status[0].toUpperCase() + record.status.slice(1);
  }
}

/** The actions a record in this status takes. */
function actions(record, item) {
  const who = record.email ?? record.grantee;
  const done = async (next, sentence) => {
    decided.set(keyOf(next), next);
    const labels = await questionsOf(next.dataset);
    // The record's card as the list now shows it (a list may have come meanwhile).
    const current = [...list.children].find((li) => li.dataset.record === keyOf(next));
    current?.replaceWith(card(next, labels));
    say(sentence);
  };
  const failed = (error) => say(explain(error), true);
  /** Sends a decision, its card's buttons disabled until the answer. */
  const sending = async (send) => {
    const buttons = [...item.querySelectorAll("button")];
    for (const button of buttons) button.disabled = true;
    try {
      await send();
    } catch (error) {
      failed(error);
    } finally {
      for (const button of buttons) button.disabled = loading;
    }
  };
  if (record.status === "pending") {
    const until = h("input", { type: "date", id: `until-${record.grantee}-${record.dataset}` });
    const reason = h("input", { type: "text", id: `reason-${record.grantee}-${record.dataset}`, maxlength: 500 });
    return h("div", { class: "decide" },
      h("form", {
        class: "row",
        onsubmit: async (event) => {
          event.preventDefault();
          if (loading) return;
          await sending(async () => {
            const body = { decision: "approve" };
            if (until.value) body.expires_at = new Date(`${until.value}T23:59:59Z`).toISOString().replace(/\.\d+Z$/, "Z");
            await done(await decide(record, body), `Approved ${who} for ${record.dataset}.`);
          });
        },
      }, h("label", { for: until.id }, "Until (optional)"), until,
      h("button", { type: "submit", "aria-label": `Approve ${who} for ${record.dataset}` }, "Approve")),
      h("form", {
        class: "row",
        onsubmit: async (event) => {
          event.preventDefault();
          if (loading) return;
          if (!reason.value.trim()) {
            say("Give a reason: the person reads it.", true);
            reason.focus();
            return;
          }
          await sending(async () => {
            await done(await decide(record, { decision: "reject", reason: reason.value.trim() }), `Rejected ${who}'s request for ${record.dataset}.`);
          });
        },
      }, h("label", { for: reason.id }, "Reason"), reason,
      h("button", { type: "submit", class: "danger", "aria-label": `Reject ${who} for ${record.dataset}` }, "Reject")));
  }
  if (record.status === "granted") {
    return h("button", {
      type: "button", class: "danger", "aria-label": `Revoke ${who}'s access to ${record.dataset}`,
      onclick: () => sending(async () => {
        await done(await decide(record, { decision: "revoke" }), `Revoked ${who}'s access to ${record.dataset}.`);
      }),
    }, "Revoke");
  }
  return null;
}

/** A record's card; `labels`: its dataset's questions by name, which label the answers (an
 * answer to a question the form no longer asks keeps its name). */
function card(record, labels = new Map()) {
  const answers = Object.entries(record.answers ?? {});
  const item = h("li", { class: "record", "data-record": keyOf(record) });
  item.append(
    h("h2", {}, h("a", { href: `dataset.html?slug=${encodeURIComponent(record.dataset)}` }, slugText(record.dataset)), " · ", record.email ?? record.grantee),
    h("p", { class: "meta" },
      h("span", { class: "record-status" }, statusText(record)),
      record.requested_at ? h("span", {}, `asked ${humanDate(record.requested_at)}`) : h("span", {}, "granted without a request"),
      record.decided_at ? h("span", {}, `decided ${humanDate(record.decided_at)} by ${record.decided_by}`) : null,
      h("span", {}, record.terms_accepted ? "terms accepted" : "no terms accepted"),
      h("span", {}, "account ", h("code", {}, record.grantee))),
    answers.length
      ? h("dl", { class: "facts answers" }, ...answers.flatMap(([name, answer]) => [h("dt", {}, labels.get(name) ?? name), h("dd", {}, answer)]))
      : null,
    actions(record, item));
  for (const button of item.querySelectorAll("button")) button.disabled = loading;
  return item;
}

/** Replaces the list with `cards`, keeping what the operator typed into the one shown (the
 * same record's Until date and reason) and where the focus was. */
function replaceList(cards) {
  const typed = [...list.querySelectorAll("input")].filter((input) => input.value).map((input) => [input.id, input.value]);
  const focused = list.contains(document.activeElement) ? document.activeElement : null;
  const selection = focused && "selectionStart" in focused ? [focused.selectionStart, focused.selectionEnd] : null;
  list.replaceChildren(...cards);
  for (const [id, value] of typed) {
    const input = document.getElementById(id);
    if (input && list.contains(input)) input.value = value;
  }
  const again = focused?.id ? document.getElementById(focused.id) : null;
  if (again && list.contains(again)) {
    again.focus();
    if (selection && again.type === "text") again.setSelectionRange(...selection);
  }
}

async function load() {
  const asked = ++latest;
  busy(true);
  let s;
  try {
    s = await session();
  } catch (error) {
    // The sign-in service could not be reached: the session is kept, and the list stays.
    if (asked === latest) {
      busy(false);
      say(error.message, true);
    }
    return;
  }
  if (asked !== latest) return;
  if (!s) {
    busy(false);
    list.replaceChildren();
    status.replaceChildren(h("a", { href: "account.html" }, "Sign in"), " with an operator's account to see access requests.");
    filter.hidden = true;
    return;
  }
  let decider;
  try {
    decider = await deciderOf(s);
  } catch (error) {
    if (asked !== latest) return;
    busy(false);
    say(explain(error), true);
    return;
  }
  if (asked !== latest) return;
  if (!decider.operator && !decider.orgs.length) {
    busy(false);
    list.replaceChildren();
    say(NEITHER, true);
    filter.hidden = true;
    return;
  }
  const params = new URLSearchParams({ status: filter.elements.status.value });
  if (!decider.operator) params.set("org", filter.elements.org.value);
  const dataset = filter.elements.dataset.value.trim();
  if (dataset) params.set("dataset", dataset);
  say("Loading…");
  try {
    // The list comes a page at a time (100 at most): follow the pages to the total.
    params.set("page_size", "100");
    const records = [];
    let body;
    for (let page = 1; ; page++) {
      params.set("page", String(page));
      body = await api(`/operator/access?${params}`, { token: s.accessToken });
      if (asked !== latest) return;
      records.push(...body.access);
      if (!body.access.length || records.length >= body.total) break;
    }
    // A decision answered after this list was read is newer than the list's copy.
    const shown = records.map((r) => (decided.get(keyOf(r))?.rev > r.rev ? decided.get(keyOf(r)) : r));
    const labels = new Map(await Promise.all([...new Set(shown.map((r) => r.dataset))].map(async (slug) => [slug, await questionsOf(slug)])));
    if (asked !== latest) return;
    busy(false);
    replaceList(shown.map((r) => card(r, labels.get(r.dataset))));
    say(records.length ? `${records.length} ${body.status}` : `Nothing ${body.status}.`);
  } catch (error) {
    if (asked !== latest) return;
    busy(false);
    list.replaceChildren();
    say(explain(error), true);
    if (error.code === "not_an_operator") {
      say(NEITHER, true);
      filter.hidden = true;
    }
  }
}

filter.addEventListener("submit", (event) => {
  event.preventDefault();
  load();
});

header();
load();

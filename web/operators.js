// The operators' page: access records in one status (pending by default), with who asked, what
// they answered, and the decisions: approve (optionally until a date), reject with a reason,
// revoke a grant. Each decision is sent with the record's revision, so that it applies only to
// what the operator saw.
import { api, explain } from "./api.js";
import { h, header } from "./dom.js";
import { humanDate } from "./format.js";
import { session } from "./session.js";

const status = document.getElementById("status");
const list = document.getElementById("records");
const filter = document.getElementById("filter");
const say = (text, error = false) =>
  status.replaceChildren(error ? h("span", { class: "error", role: "alert" }, text) : text);

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
  const done = (next, sentence) => {
    item.replaceWith(card(next));
    say(sentence);
  };
  const failed = (error) => say(explain(error), true);
  if (record.status === "pending") {
    const until = h("input", { type: "date", id: `until-${record.grantee}-${record.dataset}` });
    const reason = h("input", { type: "text", id: `reason-${record.grantee}-${record.dataset}`, maxlength: 500 });
    return h("div", { class: "decide" },
      h("form", {
        class: "row",
        onsubmit: async (event) => {
          event.preventDefault();
          try {
            const body = { decision: "approve" };
            if (until.value) body.expires_at = new Date(`${until.value}T23:59:59Z`).toISOString().replace(/\.\d+Z$/, "Z");
            done(await decide(record, body), `Approved ${who} for ${record.dataset}.`);
          } catch (error) {
            failed(error);
          }
        },
      }, h("label", { for: until.id }, "Until (optional)"), until,
      h("button", { type: "submit", "aria-label": `Approve ${who} for ${record.dataset}` }, "Approve")),
      h("form", {
        class: "row",
        onsubmit: async (event) => {
          event.preventDefault();
          if (!reason.value.trim()) {
            say("Give a reason: the person reads it.", true);
            reason.focus();
            return;
          }
          try {
            done(await decide(record, { decision: "reject", reason: reason.value.trim() }), `Rejected ${who}'s request for ${record.dataset}.`);
          } catch (error) {
            failed(error);
          }
        },
      }, h("label", { for: reason.id }, "Reason"), reason,
      h("button", { type: "submit", class: "danger", "aria-label": `Reject ${who} for ${record.dataset}` }, "Reject")));
  }
  if (record.status === "granted") {
    return h("button", {
      type: "button", class: "danger", "aria-label": `Revoke ${who}'s access to ${record.dataset}`,
      onclick: async () => {
        try {
          done(await decide(record, { decision: "revoke" }), `Revoked ${who}'s access to ${record.dataset}.`);
        } catch (error) {
          failed(error);
        }
      },
    }, "Revoke");
  }
  return null;
}

function card(record) {
  const answers = Object.entries(record.answers ?? {});
  const item = h("li", { class: "record" });
  item.append(
    h("h2", {}, h("a", { href: `dataset.html?slug=${encodeURIComponent(record.dataset)}` }, record.dataset), " · ", record.email ?? record.grantee),
    h("p", { class: "meta" },
      h("span", { class: "record-status" }, statusText(record)),
      record.requested_at ? h("span", {}, `asked ${humanDate(record.requested_at)}`) : h("span", {}, "granted without a request"),
      record.decided_at ? h("span", {}, `decided ${humanDate(record.decided_at)} by ${record.decided_by}`) : null,
      h("span", {}, record.terms_accepted ? "terms accepted" : "no terms accepted"),
      h("span", {}, "account ", h("code", {}, record.grantee))),
    answers.length ? h("dl", { class: "facts" }, ...answers.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])) : null,
    actions(record, item));
  return item;
}

async function load() {
  const s = await session();
  if (!s) {
    list.replaceChildren();
    status.replaceChildren(h("a", { href: "account.html" }, "Sign in"), " with an operator's account to see access requests.");
    filter.hidden = true;
    return;
  }
  const params = new URLSearchParams({ status: filter.elements.status.value });
  const dataset = filter.elements.dataset.value.trim();
  if (dataset) params.set("dataset", dataset);
  list.setAttribute("aria-busy", "true");
  try {
    // The list comes a page at a time (100 at most): follow the pages to the total.
    params.set("page_size", "100");
    const records = [];
    let body;
    for (let page = 1; ; page++) {
      params.set("page", String(page));
      body = await api(`/operator/access?${params}`, { token: s.accessToken });
      records.push(...body.access);
      if (!body.access.length || records.length >= body.total) break;
    }
    list.replaceChildren(...records.map(card));
    say(records.length ? `${records.length} ${body.status}` : `Nothing ${body.status}.`);
  } catch (error) {
    list.replaceChildren();
    say(explain(error), true);
    if (error.code === "not_an_operator") filter.hidden = true;
  } finally {
    list.removeAttribute("aria-busy");
  }
}

filter.addEventListener("submit", (event) => {
  event.preventDefault();
  load();
});

header();
load();

// The dataset page's part for an organisation's members (docs/site.md, "The dataset page for
// members"): its versions (the history, what changed between two, and for its editors and admins
// a rollback), an edit form (the description and the card, with a preview sanitised as the page
// renders the card), and a private dataset's page from what a member may read. dataset.js imports
// this module only for a signed-in person who belongs to the dataset's organisation (or an
// operator), so the public page loads none of it.
import { api, explain } from "./api.js";
import { fill, h, orgMark, orgOf } from "./dom.js";
import { humanBytes, humanDate, humanNumber } from "./format.js";
import { isOperator, session } from "./session.js";

const ROLES = { member: "member", editor: "editor", admin: "admin", operator: "operator" };

/** The session's access token (refreshed when it has run out). */
async function token() {
  const s = await session();
  if (!s) throw Object.assign(new Error("Your session has ended. Please sign in again."), { code: "session" });
  return s.accessToken;
}

/** The signed-in person's role in `org`: "admin", "editor", "member", "operator" (every
 * organisation's powers), or null when they belong to it not. */
export async function roleIn(org) {
  const s = await session();
  if (!s) return null;
  const body = await api("/account/orgs", { token: s.accessToken });
  const mine = body.orgs.find((m) => m.org === org);
  if (mine) return mine.role;
  return (await isOperator(s)) ? "operator" : null;
}

const mayEdit = (role) => role === "editor" || role === "admin" || role === "operator";

/** `acme~ledger` → the editor routes' `/orgs/acme/datasets/ledger`. */
function routeOf(slug) {
  const org = orgOf(slug);
  return `/orgs/${encodeURIComponent(org)}/datasets/${encodeURIComponent(slug.slice(org.length + 1))}`;
}

/** A sentence for the editor routes' refusals, in the words the API gives where they name a field. */
function explainEdit(error, org) {
  const sentences = {
    edit_conflict: "Someone changed this dataset at the same moment, so nothing was saved. Save again.",
    not_editable: "This dataset has no published version to describe, or it was taken down.",
    not_an_editor: `Your role in ${org} lets you read this dataset's history, not change it.`,
    version_not_found: "There is no such version (any more).",
    not_found: "This dataset or organisation does not exist, or you are no longer its member.",
  };
  if (error.code === "invalid_edit") return `Not saved: ${error.message}`;
  return sentences[error.code] ?? explain(error);
}

const columnsText = (list) => list.map((c) => `${c.name} (${c.dtype})`).join(", ");

function signed(n) {
  return n > 0 ? `+${humanNumber(n)}` : n < 0 ? `−${humanNumber(-n)}` : "no change";
}

/** What changed between two versions, as a list of sentences. */
function diffList(diff) {
  return h("ul", { id: "diff-result-list" },
    h("li", {}, `Rows: ${humanNumber(diff.rows_from)} → ${humanNumber(diff.rows_to)} (${signed(diff.rows_change)})`),
    h("li", {}, "Columns added: ", diff.columns_added.length ? columnsText(diff.columns_added) : "none"),
    h("li", {}, "Columns removed: ", diff.columns_removed.length ? columnsText(diff.columns_removed) : "none"),
    h("li", {}, "Types changed: ", diff.types_changed.length
      ? diff.types_changed.map((t) => `${t.name} (${t.from} → ${t.to})`).join(", ") : "none"));
}

/** The "compare" control: two versions, and what changed between them. */
function compare(slug, versions) {
  const options = (selected) => versions.map((v) => h("option", { value: v.version, selected: v.version === selected }, `Version ${v.version}`));
  const last = versions[versions.length - 1].version;
  const before = versions.length > 1 ? versions[versions.length - 2].version : last;
  const from = h("select", { id: "compare-from" }, options(before));
  const to = h("select", { id: "compare-to" }, options(last));
  const result = h("div", { id: "diff-result", "aria-live": "polite" });
  const button = h("button", { type: "submit", class: "secondary" }, "Compare");
  return h("form", {
    class: "stack", id: "compare",
    onsubmit: async (event) => {
      event.preventDefault();
      button.disabled = true;
      fill(result, h("p", { class: "status" }, "Comparing…"));
      try {
        const diff = await api(`${routeOf(slug)}/diff?from=${from.value}&to=${to.value}`, { token: await token() });
        fill(result, h("p", {}, `From version ${diff.from} to version ${diff.to}:`), diffList(diff));
      } catch (error) {
        fill(result, h("p", { class: "error", role: "alert" }, explainEdit(error, orgOf(slug))));
      } finally {
        button.disabled = false;
      }
    },
  },
  h("h3", {}, "Compare two versions"),
  h("div", { class: "row" }, h("label", { for: "compare-from" }, "From"), from, h("label", { for: "compare-to" }, "to"), to, button),
  result);
}

/** The history table; an editor's row of an inactive version has "Make active". */
function historyTable(slug, versions, role, reload, say) {
  const activate = (v) => async (event) => {
    const message = `Make version ${v.version} the active one? Downloads, rows and the statistics shown will be version ${v.version}'s; the other versions are kept.`;
    if (!window.confirm(message)) return;
    const button = event.currentTarget;
    button.disabled = true;
    try {
      await api(`${routeOf(slug)}/versions/${v.version}/activate`, { method: "POST", token: await token() });
      await reload(`Version ${v.version} is active.`);
    } catch (error) {
      button.disabled = false;
      say(explainEdit(error, orgOf(slug)), true);
    }
  };
  return h("div", { class: "table-box" }, h("table", { class: "keys", id: "versions" },
    h("thead", {}, h("tr", {}, ["Version", "Published", "Rows", "Size", "Columns", "SHA-256", ""].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, [...versions].reverse().map((v) => h("tr", { "data-version": v.version },
      h("td", { "data-label": "Version" }, String(v.version), v.active ? [" ", h("strong", { class: "badge" }, "Active")] : null),
      h("td", { "data-label": "Published" }, humanDate(v.published_at)),
      h("td", { "data-label": "Rows" }, humanNumber(v.row_count)),
      h("td", { "data-label": "Size" }, humanBytes(v.size)),
      h("td", { "data-label": "Columns" }, h("span", { title: columnsText(v.columns) }, humanNumber(v.columns.length))),
      h("td", { "data-label": "SHA-256" }, h("code", { title: v.sha256 }, `${v.sha256.slice(0, 12)}…`)),
      h("td", {}, !v.active && mayEdit(role)
        ? h("button", { type: "button", class: "secondary", "aria-label": `Make version ${v.version} active`, onclick: activate(v) }, "Make active")
        : null))))));
}

/** The card's preview: readme.js's rendering (marked, then DOMPurify), as the page shows it. */
function cardPreview(textarea) {
  const preview = h("div", { class: "card-body", id: "card-preview", "aria-live": "off" });
  let module;
  let timer;
  const draw = () => {
    if (!textarea.value.trim()) fill(preview, h("p", { class: "meta" }, "No card: the page shows none."));
    else if (module) preview.replaceChildren(module.renderCard(textarea.value));
  };
  import("./readme.js").then((m) => {
    module = m;
    draw();
  }, (error) => fill(preview, h("p", { class: "error" }, `The preview could not load (${error.message}).`)));
  textarea.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(draw, 150);
  });
  draw();
  return preview;
}

const FIELDS = [
  ["name", "Name", "input"], ["description", "Description", "textarea"], ["category", "Category", "input"],
  ["tags", "Tags (separated by commas)", "input"], ["license", "License", "input"], ["source", "Source", "input"],
];

/** The edit form. `d` is what the page knows: every field of a public dataset; of a private one,
 * its name and description only (the others are not given to the site), so a field left empty
 * there keeps its value. Only the fields changed are sent. */
function editForm(d, known, reload, yourRole) {
  const org = orgOf(d.slug);
  const start = {
    name: d.name ?? "", description: d.description ?? "", category: d.category ?? "",
    tags: (d.tags ?? []).join(", "), license: d.license ?? "", source: d.source ?? "", readme: d.readme ?? "",
  };
  const controls = {};
  const rows = FIELDS.map(([field, label, tag]) => {
    const id = `edit-${field}`;
    controls[field] = tag === "textarea"
      ? h("textarea", { id, rows: 3, maxlength: 4096 }, start[field])
      : h("input", { type: "text", id, value: start[field] });
    return h("div", { class: "stack" }, h("label", { for: id }, label), controls[field]);
  });
  controls.readme = h("textarea", { id: "edit-readme", rows: 12, maxlength: 32768, spellcheck: "true" }, start.readme);
  const result = h("p", { id: "edit-result", role: "status" });
  const button = h("button", { type: "submit" }, "Save");
  const form = h("form", {
    class: "stack", id: "edit",
    onsubmit: async (event) => {
      event.preventDefault();
      const body = {};
      for (const field of Object.keys(start)) {
        const value = controls[field].value;
        if (value === start[field]) continue;
        // A field the page did not know is sent only when filled in.
        if (!known && !value.trim()) continue;
        body[field] = field === "tags" ? value.split(",").map((t) => t.trim()).filter(Boolean) : value;
      }
      if (!Object.keys(body).length) {
        fill(result, "Nothing changed: nothing to save.");
        return;
      }
      button.disabled = true;
      fill(result, "Saving…");
      try {
        await api(routeOf(d.slug), { method: "PUT", body, token: await token() });
        await reload("Saved: the page shows the new description.");
      } catch (error) {
        button.disabled = false;
        fill(result, h("span", { class: "error", role: "alert" }, explainEdit(error, org)));
      }
    },
  },
  known ? null : h("p", { class: "meta" }, "This page cannot read a private dataset's category, tags, license, source or card: a field left empty keeps its value."),
  rows,
  h("div", { class: "stack" }, h("label", { for: "edit-readme" }, "Dataset card (Markdown; empty removes it)"), controls.readme),
  h("h3", {}, "Preview of the card"),
  cardPreview(controls.readme),
  h("div", { class: "row" }, button), result);
  // The form is a grid: its items may shrink below their content (a long line of the card's
  // preview scrolls in its own box instead of widening the page). CSSOM, which the page's policy
  // allows where it forbids style attributes.
  for (const item of form.children) item.style.minWidth = "0";
  return h("details", { class: "edit", id: "edit-details" }, h("summary", {}, `Edit this dataset (as ${ROLES[yourRole] ?? yourRole})`), form);
}

/** The members' panel: the versions, and for editors and admins the edit form. `d` is the
 * dataset as the page has it (`d.private`: built from the editor routes); `said` a sentence to
 * show (after a save or a rollback); `reload(said)` fetches the dataset again and redraws. */
export async function membersPanel(d, yourRole, reload, said = "") {
  const org = orgOf(d.slug);
  const status = h("p", { class: "status", id: "members-status", role: "status" }, said);
  const say = (text, error = false) => fill(status, error ? h("span", { class: "error" }, text) : text);
  const section = h("section", { class: "panel members", id: "members-panel", "aria-labelledby": "versions-heading" },
    h("h2", { id: "versions-heading" }, "Versions"),
    h("p", { class: "meta" }, `For ${org}'s members: your role is ${ROLES[yourRole] ?? yourRole}.`),
    status);
  let history;
  try {
    history = await api(`${routeOf(d.slug)}/versions`, { token: await token() });
  } catch (error) {
    section.append(h("p", { class: "error" }, explainEdit(error, org)));
    return section;
  }
  const versions = history.versions;
  section.append(historyTable(d.slug, versions, yourRole, reload, say));
  if (versions.length > 1) section.append(compare(d.slug, versions));
  if (mayEdit(yourRole)) {
    // The upload form (upload.js) is an editor's only; it loads hash-wasm when a file is sent.
    const slot = h("div", { id: "upload-slot" });
    section.append(slot, editForm(d, !d.private, reload, yourRole));
    import("./upload.js").then((m) => slot.replaceWith(m.uploadForm(d.slug, token, reload)),
      (error) => fill(slot, h("p", { class: "error" }, `The upload form could not load (${error.message}).`)));
  }
  return section;
}

/** A private dataset's page for its organisation's members: the public metadata answers the site
 * 404, so the page is built from the editor routes (the organisation's list: name, description;
 * the history: the active version's rows, size, columns and types). Null when the person may not
 * see it. */
export async function privateDataset(slug) {
  const org = orgOf(slug);
  const auth = { token: await token() };
  const [listed, history] = await Promise.all([
    api(`/orgs/${encodeURIComponent(org)}/datasets`, auth),
    api(`${routeOf(slug)}/versions`, auth),
  ]);
  const entry = listed.datasets.find((x) => x.slug === slug);
  if (!entry) return null;
  const active = history.versions.find((v) => v.active) ?? history.versions[history.versions.length - 1];
  return { ...entry, private: true, active, columns: active?.columns ?? [] };
}

/** The head of a private dataset's page (the members' panel follows it). */
export function privateHead(d, pages) {
  const a = d.active;
  const rows = [
    ["Slug", h("code", {}, d.slug)],
    ["Access", `Private: visible to ${orgOf(d.slug)}'s members`],
    a ? ["Rows × columns", `${humanNumber(a.row_count)} × ${humanNumber(a.columns.length)}`] : null,
    a ? ["Size", humanBytes(a.size)] : null,
    a ? ["Version", `${a.version}, published ${humanDate(a.published_at)}`] : ["Version", "none published"],
    a ? ["SHA-256", h("code", { id: "sha256" }, a.sha256)] : null,
    ["Updated", humanDate(d.updated_at)],
  ];
  return [
    h("h1", {}, orgMark(d.slug, pages), d.name, " ", h("span", { class: "badge gated" }, "Private")),
    h("p", { class: "notice", id: "private-notice" }, `Private: visible to ${orgOf(d.slug)}'s members.`,
      " Its data is read with a read key of your account (the API's /datasets/{slug}/data); this page shows what the organisation's routes give."),
    d.description ? h("p", { class: "description" }, d.description) : null,
    h("dl", { class: "facts" }, rows.filter(Boolean).flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
    h("div", { id: "members-slot" }),
    h("h2", { id: "columns-heading" }, `Columns (${humanNumber(d.columns.length)})`),
    h("div", { class: "table-box" }, h("table", { class: "keys", id: "private-columns" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Column"), h("th", { scope: "col" }, "Type"))),
      h("tbody", {}, d.columns.map((c) => h("tr", {}, h("td", { "data-label": "Column" }, c.name), h("td", { "data-label": "Type" }, h("code", {}, c.dtype))))))),
  ];
}

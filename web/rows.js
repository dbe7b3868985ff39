// The dataset page's data table: rows from the rows API, 100 a page, each column's type in its
// header, scrolling sideways inside its box, long cells that expand. Read with the key chosen in
// the download panel (none in a keyless window); a refusal is said in a sentence.
import { api, explain } from "./api.js";
import { fill, h } from "./dom.js";
import { humanNumber } from "./format.js";

const PAGE = 100;
// Cells longer than this show their start, and expand on request.
const SHORT = 80;

/** A cell's text: strings as they are, everything else (numbers, nested values) as JSON. */
function text(value) {
  if (value === null) return "null";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Floating-point types, whose NaN and infinities the API sends as the strings below. */
const FLOAT = /^(halffloat|float|double)$/;
const SPECIAL = { NaN: "not a number", Infinity: "infinity", "-Infinity": "minus infinity" };

function cell(value, cut, type) {
  const full = text(value);
  // A null is a value of the file, not a gap: a grey dash, named for screen readers.
  if (value === null) return h("td", { "data-null": "" }, h("span", { class: "null", title: "null", "aria-label": "null" }, "–"));
  // So are a float column's NaN and infinities: shown as such, in grey, and named.
  if (FLOAT.test(type) && Object.hasOwn(SPECIAL, value)) {
    return h("td", { "data-float": value }, h("span", { class: "null", title: SPECIAL[value] }, value));
  }
  const shown = full;
  if (full.length <= SHORT && !cut) return h("td", {}, shown);
  // A long cell: its start, and the whole value (as the API gave it) on request.
  return h("td", {},
    h("details", { class: "cell" },
      h("summary", {}, `${full.slice(0, SHORT)}…`),
      h("div", { class: "cell-full" }, h("span", { class: "value" }, full),
        cut ? h("p", { class: "samples" }, "Cut by the API: download the file for the whole value.") : null)));
}

function table(page) {
  return h("div", { class: "table-box", tabindex: "0", role: "region", "aria-labelledby": "rows-heading" },
    h("table", { class: "rows", id: "rows-table" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"),
        page.columns.map((c) => h("th", { scope: "col" }, c.name, h("span", { class: "type" }, c.type))))),
      h("tbody", {}, page.rows.map((row) => h("tr", {},
        h("th", { scope: "row" }, humanNumber(row.row_idx + 1)),
        page.columns.map((c) => cell(row.row[c.name] ?? null, row.truncated_cells.includes(c.name), c.type)))))));
}

/**
 * The data section for dataset `d`. `chosenKey()` says which key the person chose (undefined:
 * none); `missing` is the sentence to say when no key was chosen on a gated dataset.
 */
export function rowsSection(d, chosenKey) {
  const result = h("div", { id: "rows-result", "aria-live": "polite" });
  let offset = 0;

  async function show(at) {
    const key = chosenKey();
    if (d.access.mode !== "keyless" && !key) {
      fill(result, h("p", { class: "error", id: "rows-missing" },
        d.access.level === "approval"
          ? "To see rows, choose a read key of an account granted access, under Download above."
          : "To see rows, choose or paste a read key under Download above."));
      return;
    }
    fill(result, h("p", { class: "status" }, "Loading rows…"));
    try {
      const query = new URLSearchParams({ offset: String(at), length: String(PAGE) });
      const page = await api(`/datasets/${encodeURIComponent(d.slug)}/rows?${query}`, { key });
      offset = at;
      const last = page.offset + page.length;
      const nav = h("nav", { class: "pager", "aria-label": "Rows" },
        page.offset > 0
          ? h("button", { type: "button", class: "secondary", id: "rows-previous", onclick: () => show(Math.max(0, page.offset - PAGE)) }, "Previous")
          : null,
        h("span", { id: "rows-range" }, page.length
          ? `Rows ${humanNumber(page.offset + 1)}–${humanNumber(last)} of ${humanNumber(page.num_rows_total)} (version ${page.version})`
          : `No rows here: the dataset has ${humanNumber(page.num_rows_total)}.`),
        page.next_offset !== null
          ? h("button", { type: "button", class: "secondary", id: "rows-next", onclick: () => show(page.next_offset) }, "Next")
          : null);
      fill(result, nav, table(page));
    } catch (error) {
      fill(result, h("p", { class: "error", role: "alert" }, explain(error)));
    }
  }

  const button = h("button", { type: "button", id: "show-rows" },
    d.access.mode === "keyless" ? "Show the rows again" : "Show the rows with the chosen key");
  button.addEventListener("click", () => show(offset));
  const intro = h("p", { class: "samples" },
    d.access.mode === "keyless"
      ? "The first rows, read without a key while the dataset is keyless."
      : "Read with the key chosen under Download.");
  // Keyless: shown at once. Otherwise: once the person has chosen a key.
  if (d.access.mode === "keyless") show(0);
  return h("section", { class: "rows-section", "aria-labelledby": "rows-heading" },
    h("h2", { id: "rows-heading" }, "Data"), intro, button, result);
}

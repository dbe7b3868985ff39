// The dataset page's data table: rows from the rows API, 100 a page, each column's type in its
// header, a null as `null` in grey, long cells that expand, in a box that scrolls with its header
// row in sight, the pager above and below it. Integers keep every digit (`exactJson`: past 2^53
// JSON.parse would round them). Read with the key chosen in the download panel (none in a
// keyless window); a refusal is said in a sentence. Only the latest page asked for is shown.
// `valueCell` draws the SQL console's result cells too.
import { api, explain } from "./api.js";
import { fill, h } from "./dom.js";
import { splitSelect } from "./files.js";
import { humanNumber } from "./format.js";

const PAGE = 100;
// Cells longer than this show their start, and expand on request.
const SHORT = 32;

/**
 * JSON text parsed as `JSON.parse` would, except that an integer past 2^53 (an int64 or
 * uint64 cell) becomes a BigInt holding every digit, where `JSON.parse` would round it to the
 * nearest double. Strings go through `JSON.parse` itself.
 */
export function exactJson(text) {
  const STRING = /"(?:[^"\\]|\\.)*"/y;
  const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
  let at = 0;
  const fail = () => { throw new SyntaxError(`Unexpected JSON at position ${at}`); };
  const space = () => { while (" \t\n\r".includes(text[at]) && at < text.length) at += 1; };
  const token = (pattern) => {
    pattern.lastIndex = at;
    const found = pattern.exec(text);
    if (!found) fail();
    at = pattern.lastIndex;
    return found;
  };
  const expect = (char) => { space(); if (text[at] !== char) fail(); at += 1; };
  function value() {
    space();
    const c = text[at];
    if (c === "{") {
      at += 1;
      const object = {};
      space();
      if (text[at] === "}") { at += 1; return object; }
      for (;;) {
        space();
        const key = JSON.parse(token(STRING)[0]);
        expect(":");
        // As JSON.parse does: an own property, whatever its name ("__proto__" included).
        Object.defineProperty(object, key, { value: value(), enumerable: true, writable: true, configurable: true });
        space();
        at += 1;
        if (text[at - 1] === "}") return object;
        if (text[at - 1] !== ",") fail();
      }
    }
    if (c === "[") {
      at += 1;
      const array = [];
      space();
      if (text[at] === "]") { at += 1; return array; }
      for (;;) {
        array.push(value());
        space();
        at += 1;
        if (text[at - 1] === "]") return array;
        if (text[at - 1] !== ",") fail();
      }
    }
    if (c === '"') return JSON.parse(token(STRING)[0]);
    for (const [word, meaning] of [["true", true], ["false", false], ["null", null]]) {
      if (text.startsWith(word, at)) { at += word.length; return meaning; }
    }
    const [literal, fraction, exponent] = token(NUMBER);
    const number = Number(literal);
    if (fraction === undefined && exponent === undefined && !Number.isSafeInteger(number)) return BigInt(literal);
    return number;
  }
  const parsed = value();
  space();
  if (at !== text.length) fail();
  return parsed;
}

/** A value as JSON text, a BigInt's every digit included (JSON.stringify refuses BigInts). */
function json(value) {
  if (typeof value === "bigint") return String(value);
  if (Array.isArray(value)) return `[${value.map(json).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${json(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** A cell's text: strings as they are, everything else (numbers, nested values) as JSON. */
function text(value) {
  return typeof value === "string" ? value : json(value);
}

/** Floating-point types, whose NaN and infinities the API sends as the strings below. */
const FLOAT = /^(halffloat|float|double)$/;
const SPECIAL = { NaN: "not a number", Infinity: "infinity", "-Infinity": "minus infinity" };

/**
 * A table cell of `full` text: as it is, or, when longer than SHORT characters (or `cut`),
 * its start on one line and the whole value on request (`<details>`). `cut`: a sentence
 * saying the value was cut, or nothing. A null (`full` null) is the word `nullWord` in grey,
 * marked `data-null`, unlike any string (a "–" or "null" string included).
 */
export function valueCell(full, { cut = null, nullWord = "null" } = {}) {
  if (full === null) return h("td", { "data-null": "" }, h("span", { class: "null", title: "no value" }, nullWord));
  if (full.length <= SHORT && !cut) return h("td", {}, full);
  return h("td", {},
    h("details", { class: "cell" },
      h("summary", {}, full.slice(0, SHORT), "…"),
      h("div", { class: "cell-full" }, h("span", { class: "value" }, full),
        cut ? h("p", { class: "samples" }, cut) : null)));
}

function cell(value, cut, type) {
  if (value === null) return valueCell(null);
  // A float column's NaN and infinities: shown as such, in grey, and named.
  if (FLOAT.test(type) && Object.hasOwn(SPECIAL, value)) {
    return h("td", { "data-float": value }, h("span", { class: "null", title: SPECIAL[value] }, value));
  }
  return valueCell(text(value), { cut: cut ? "Cut by the API: download the file for the whole value." : null });
}

function table(page) {
  // The box scrolls both ways, so that the header row stays above the rows (style.css).
  return h("div", { class: "table-box rows-box", tabindex: "0", role: "region", "aria-labelledby": "rows-heading" },
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
  // A version of many files in splits: the rows of the split chosen here (the rows API's
  // `split`), offsets and the total over that split.
  const choice = splitSelect(d, "rows-split", "Split");
  const split = () => choice?.querySelector("select").value ?? "";
  let offset = 0;
  // Only the latest request's answer is shown: a page asked for earlier and answered later
  // (a slow Next, then "Show the rows again") is dropped.
  let latest = 0;

  /** Shows the page at `at`; `below`: asked from the pager below the table, whose person is
   * taken back to the table's top. */
  async function show(at, below = false) {
    const asked = ++latest;
    const key = chosenKey();
    if (d.access.mode !== "keyless" && !key) {
      fill(result, h("p", { class: "error", id: "rows-missing" },
        d.access.level === "approval"
          ? "To see rows, choose a read key of an account granted access, under Download above."
          : "To see rows, choose or paste a read key under Download above."));
      return;
    }
    fill(result, h("p", { class: "status" }, "Loading rows…"));
    let page;
    try {
      const query = new URLSearchParams({ offset: String(at), length: String(PAGE) });
      if (split()) query.set("split", split());
      page = await api(`/datasets/${encodeURIComponent(d.slug)}/rows?${query}`, { key, parse: exactJson });
    } catch (error) {
      if (asked === latest) fill(result, h("p", { class: "error", role: "alert" }, explain(error)));
      return;
    }
    if (asked !== latest) return;
    offset = at;
    const last = page.offset + page.length;
    // The pager, above the table and again below it; the ids are the one above's.
    const pager = (where) => h("nav", { class: "pager", "aria-label": where === "above" ? "Rows" : "Rows, below the table" },
      page.offset > 0
        ? h("button", { type: "button", class: "secondary", id: where === "above" ? "rows-previous" : null, onclick: () => show(Math.max(0, page.offset - PAGE), where === "below") }, "Previous")
        : null,
      h("span", { id: where === "above" ? "rows-range" : null }, page.length
        ? `Rows ${humanNumber(page.offset + 1)}–${humanNumber(last)} of ${humanNumber(page.num_rows_total)}${split() ? ` in ${split()}` : ""} (version ${page.version})`
        : `No rows here: the ${split() ? "split" : "dataset"} has ${humanNumber(page.num_rows_total)}.`),
      page.next_offset !== null
        ? h("button", { type: "button", class: "secondary", id: where === "above" ? "rows-next" : null, onclick: () => show(page.next_offset, where === "below") }, "Next")
        : null);
    const box = table(page);
    fill(result, pager("above"), box, page.length ? pager("below") : null);
    if (below) {
      result.scrollIntoView({ block: "start" });
      box.focus({ preventScroll: true });
    }
  }

  const button = h("button", { type: "button", id: "show-rows" },
    d.access.mode === "keyless" ? "Show the rows again" : "Show the rows with the chosen key");
  button.addEventListener("click", () => show(offset));
  choice?.querySelector("select").addEventListener("change", () => show(0));
  const intro = h("p", { class: "samples" },
    d.access.mode === "keyless"
      ? "The first rows, read without a key while the dataset is keyless."
      : "Read with the key chosen under Download.");
  // Keyless: shown at once. Otherwise: once the person has chosen a key.
  if (d.access.mode === "keyless") show(0);
  return h("section", { class: "rows-section", "aria-labelledby": "rows-heading" },
    h("h2", { id: "rows-heading" }, "Data"), intro, choice ? h("div", { class: "row" }, choice, button) : button, result);
}

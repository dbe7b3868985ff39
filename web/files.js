// A version of many files on the dataset page: its splits (files, rows, size each), its Hive
// partition columns (name, type), both from the metadata's `files`, and the files themselves,
// a page at a time, from the data endpoint's listing form (`GET /datasets/{slug}/data` with
// `split`, `page_size` and `page_token`: each file's path, split, partition values, rows, size,
// SHA-256 and presigned URL). The listing is gated as a download is: read with the key chosen
// in the download panel (none in a keyless window), a refusal said in a sentence. `allFiles`
// reads every page of a split's listing, for the SQL console. Only the latest page asked for is
// shown.
import { api, explain } from "./api.js";
import { fill, h } from "./dom.js";
import { humanBytes, humanDate, humanNumber } from "./format.js";

/** Files a page of the list shows. */
const PAGE = 25;
/** Files a page of the listing asks for when every file is read (the endpoint's maximum). */
const ALL_PAGE = 1000;

/** The splits of a many-file version (`d.files.splits`), empty when its files have none. */
export function splitsOf(d) {
  return d.files?.splits ?? [];
}

/** A `<select>` of the version's splits (labelled `label`); `every` adds an option for every
 * file (value ""), first and chosen; otherwise `train` is chosen when there is one (as Hugging
 * Face's viewer does), else the first. Null when the files have no splits. */
export function splitSelect(d, id, label, { every = false } = {}) {
  const splits = splitsOf(d);
  if (!splits.length) return null;
  const chosen = every ? "" : (splits.find((s) => s.name === "train") ?? splits[0]).name;
  const select = h("select", { id },
    every ? h("option", { value: "", selected: true }, "Every split") : null,
    splits.map((s) => h("option", { value: s.name, selected: s.name === chosen }, `${s.name} (${humanNumber(s.row_count)} rows)`)));
  return h("div", { class: "split-choice" }, h("label", { for: id }, label), select);
}

/** One page of the listing: `split` ("" or undefined: every file), `token` (the previous page's
 * `next_page_token`, or null for the first page). */
export function listFiles(d, { key, split, size = PAGE, token = null }) {
  const query = new URLSearchParams({ page_size: String(size) });
  if (split) query.set("split", split);
  if (token) query.set("page_token", token);
  return api(`/datasets/${encodeURIComponent(d.slug)}/data?${query}`, { key });
}

/** Every file of `split` (every file of the version for ""), each page of the listing in turn:
 * `{files, expires}`, `expires` the earliest of the pages' `expires_at` (ms). */
export async function allFiles(d, key, split) {
  const files = [];
  let expires = Infinity;
  let token = null;
  do {
    const page = await listFiles(d, { key, split, size: ALL_PAGE, token });
    files.push(...page.files);
    expires = Math.min(expires, Date.parse(page.expires_at));
    token = page.next_page_token;
  } while (token);
  return { files, expires };
}

/** A partition value as the listing types it (null: Hive's null partition). */
function partitionText(value) {
  return value === null || value === undefined ? null : String(value);
}

function splitsTable(splits) {
  return h("div", { class: "table-box" },
    h("table", { class: "summary", id: "splits-table" },
      h("thead", {}, h("tr", {}, ["Split", "Files", "Rows", "Size"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, splits.map((s) => h("tr", {},
        h("th", { scope: "row" }, s.name),
        h("td", {}, humanNumber(s.files)),
        h("td", {}, humanNumber(s.row_count)),
        h("td", {}, humanBytes(s.size)))))));
}

function partitionsTable(columns) {
  return h("div", { class: "table-box" },
    h("table", { class: "summary", id: "partitions-table" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Column"), h("th", { scope: "col" }, "Type"))),
      h("tbody", {}, columns.map((c) => h("tr", {},
        h("th", { scope: "row" }, c.name), h("td", {}, c.type))))));
}

/** A page of files as a table like the data table: path, split, each partition column, rows,
 * size, a download link. */
function filesTable(d, page) {
  const partitions = d.files.partition_columns;
  const splits = splitsOf(d).length > 0;
  return h("div", { class: "table-box rows-box", tabindex: "0", role: "region", "aria-labelledby": "files-list-heading" },
    h("table", { class: "rows files", id: "files-table" },
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "Path"),
        splits ? h("th", { scope: "col" }, "Split") : null,
        partitions.map((c) => h("th", { scope: "col" }, c.name, h("span", { class: "type" }, c.type))),
        ["Rows", "Size", "File"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, page.files.map((f) => h("tr", {},
        h("th", { scope: "row" }, h("code", {}, f.path)),
        splits ? h("td", {}, f.split ?? "–") : null,
        partitions.map((c) => {
          const value = partitionText(f.partition_values?.[c.name]);
          return value === null ? h("td", { "data-null": "" }, h("span", { class: "null", title: "Hive's null partition" }, "null")) : h("td", {}, value);
        }),
        h("td", {}, humanNumber(f.row_count)),
        h("td", {}, humanBytes(f.size_bytes)),
        h("td", {}, h("a", { href: f.url, title: `SHA-256 ${f.sha256}`, "aria-label": `Download ${f.path}` }, "Download")))))));
}

/**
 * The Files section of a many-file version `d` (`d.files` set): its splits, its partition
 * columns and its files, a page at a time. `chosenKey()` says which key the person chose
 * (undefined: none). Returns the section; `section.showFiles()` lists the first page again.
 */
export function filesSection(d, chosenKey) {
  const splits = splitsOf(d);
  const partitions = d.files.partition_columns;
  const result = h("div", { id: "files-result", "aria-live": "polite" });
  const choice = splitSelect(d, "files-split", "Split", { every: true });
  // The tokens of the pages shown so far: tokens[i] asks for page i (null: the first).
  let tokens = [null];
  let at = 0;
  let latest = 0;

  async function show(index) {
    const asked = ++latest;
    const key = chosenKey();
    if (d.access.mode !== "keyless" && !key) {
      fill(result, h("p", { class: "error", id: "files-missing" },
        d.access.level === "approval"
          ? "To list the files, choose a read key of an account granted access, under Download above."
          : "To list the files, choose or paste a read key under Download above."));
      return;
    }
    fill(result, h("p", { class: "status" }, "Loading the files…"));
    const split = choice ? choice.querySelector("select").value : "";
    let page;
    try {
      page = await listFiles(d, { key, split, token: tokens[index] });
    } catch (error) {
      if (asked === latest) fill(result, h("p", { class: "error", role: "alert" }, explain(error)));
      return;
    }
    if (asked !== latest) return;
    at = index;
    tokens = tokens.slice(0, index + 1);
    if (page.next_page_token) tokens.push(page.next_page_token);
    const first = index * PAGE;
    const pager = h("nav", { class: "pager", "aria-label": "Files" },
      index > 0 ? h("button", { type: "button", class: "secondary", id: "files-previous", onclick: () => show(at - 1) }, "Previous") : null,
      h("span", { id: "files-range" }, page.files.length
        ? `Files ${humanNumber(first + 1)}–${humanNumber(first + page.files.length)} of ${humanNumber(page.file_count)}${split ? ` in ${split}` : ""}`
        : "No files here."),
      page.next_page_token ? h("button", { type: "button", class: "secondary", id: "files-next", onclick: () => show(at + 1) }, "Next") : null);
    fill(result, pager, page.files.length ? filesTable(d, page) : null,
      h("p", { class: "samples" }, `Each link is signed for its own file and expires at ${humanDate(page.expires_at)}.`));
  }

  const button = h("button", { type: "button", id: "show-files" },
    d.access.mode === "keyless" ? "List the files again" : "List the files with the chosen key");
  button.addEventListener("click", () => { tokens = [null]; show(0); });
  choice?.querySelector("select").addEventListener("change", () => { tokens = [null]; show(0); });
  const summary = `This version is ${humanNumber(d.files.count)} Parquet file${d.files.count === 1 ? "" : "s"}`
    + (splits.length ? ` in ${humanNumber(splits.length)} split${splits.length === 1 ? "" : "s"}` : "")
    + (partitions.length ? `, partitioned by ${partitions.map((c) => c.name).join(", ")}` : "")
    + ". The column statistics below cover the whole version, or one split of your choice.";
  const section = h("section", { class: "files-section", "aria-labelledby": "files-heading" },
    h("h2", { id: "files-heading" }, `Files (${humanNumber(d.files.count)})`),
    h("p", { id: "files-summary" }, summary),
    splits.length ? [h("h3", { id: "splits-heading" }, "Splits"), splitsTable(splits)] : null,
    partitions.length ? [h("h3", { id: "partitions-heading" }, "Partition columns"), partitionsTable(partitions)] : null,
    h("h3", { id: "files-list-heading" }, "The files"),
    h("p", { class: "samples" }, d.access.mode === "keyless"
      ? "Listed without a key while the dataset is keyless, each with its own download link."
      : "Listed with the key chosen under Download, each with its own download link."),
    h("div", { class: "row" }, choice, button),
    result);
  section.showFiles = () => { tokens = [null]; return show(0); };
  if (d.access.mode === "keyless") show(0);
  return section;
}

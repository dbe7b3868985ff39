// A dataset's page: everything the metadata endpoint returns (one request) but the discussions
// (the site has no page for them yet), a chart per column, the data table (rows.js), the
// access section of a dataset shared by approval, and the download panel.
import { api, config, explain } from "./api.js";
import { accessBadge, copy, fill, h, header, orgMark, orgOf, orgPages } from "./dom.js";
import { compactNumber, downloadCount, humanBytes, humanDate, humanDecimal, humanDuration, humanNumber } from "./format.js";
import { filesSection, splitSelect } from "./files.js";
import { datasetJsonLd, datasetPageUrl, placeJsonLd, timeRange } from "./linked.js";
import { accessPanel } from "./request.js";
import { rowsSection } from "./rows.js";
import { session, storedSession, tabKeys } from "./session.js";

const slug = new URLSearchParams(location.search).get("slug") ?? "";
const status = document.getElementById("status");
const article = document.getElementById("dataset");

// ---------------------------------------------------------------------------------------------
// Charts: small inline SVG, drawn from the statistics the metadata carries

const SVG = "http://www.w3.org/2000/svg";
// A chart is drawn about as wide as its viewBox (a column card is 20 to 28 rem wide, and
// style.css caps the chart's width), so its units are about pixels: text of FONT units reads
// at about FONT px.
const WIDTH = 320;
const HEIGHT = 160;
const FONT = 12;
const CHAR = FONT * 0.62; // about the width of a character, to size margins

function svg(tag, attributes, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

const tooltip = (text) => svg("title", {}, text);

function edgeLabel(value) {
  if (typeof value === "number") return humanDecimal(value);
  const text = String(value);
  // Timestamps to the minute (a last edge may sit a microsecond past the maximum).
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(text) ? text.slice(0, 16).replace("T", " ") : text;
}

/** The y-scale of a chart of counts up to `max`: ticks from 0 at a round step (1, 2 or 5 times a
 * power of ten, a whole number), the top one at or above `max`. */
function countScale(max) {
  const rough = Math.max(max, 1) / 3;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough));
  const top = Math.max(step, Math.ceil(max / step) * step);
  const ticks = [];
  for (let t = 0; t <= top; t += step) ticks.push(t);
  return { top, ticks };
}

/** A histogram: one bar per bin on a y-scale of counts, the first and last edges below. */
function histogram(column) {
  const { bin_edges: edges, counts } = column.histogram;
  const max = Math.max(0, ...counts);
  const scale = countScale(max);
  const tickLabels = scale.ticks.map((t) => compactNumber(t));
  const left = Math.ceil(Math.max(...tickLabels.map((l) => l.length)) * CHAR) + 8;
  const top = FONT / 2 + 2;
  const base = HEIGHT - FONT - 8; // the x axis
  const y = (count) => base - (count / scale.top) * (base - top);
  const barWidth = (WIDTH - left) / counts.length;
  const yAxis = svg("g", { class: "y-axis" }, ...scale.ticks.flatMap((t, i) => [
    svg("line", { class: "grid", x1: left, x2: WIDTH, y1: y(t).toFixed(1), y2: y(t).toFixed(1) }),
    svg("text", { x: left - 5, y: (y(t) + FONT * 0.35).toFixed(1), "text-anchor": "end" }, tickLabels[i]),
  ]));
  const bars = counts.map((count, i) => svg("rect", {
    class: "bar", x: (left + i * barWidth + 1).toFixed(1), y: y(count).toFixed(1),
    width: Math.max(1, barWidth - 2).toFixed(1), height: (base - y(count)).toFixed(1),
  }, tooltip(`${edgeLabel(edges[i])} to ${edgeLabel(edges[i + 1])}: ${humanNumber(count)} value${count === 1 ? "" : "s"}`)));
  const total = counts.reduce((a, b) => a + b, 0);
  return svg("svg", {
    class: "chart", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img",
    "aria-label": `Histogram of ${column.name}: ${counts.length} bins from ${edgeLabel(edges[0])} to ${edgeLabel(edges[edges.length - 1])}, ${humanNumber(total)} values, at most ${humanNumber(max)} in a bin`,
  }, yAxis, ...bars,
  svg("line", { class: "axis", x1: left, x2: WIDTH, y1: base, y2: base }),
  svg("g", { class: "x-axis" },
    svg("text", { x: left, y: HEIGHT - 3 }, edgeLabel(edges[0])),
    svg("text", { x: WIDTH, y: HEIGHT - 3, "text-anchor": "end" }, edgeLabel(edges[edges.length - 1]))));
}

/** The top values as horizontal bars, each labelled with its count (when the statistics carry
 * counts) and its tooltip. */
function topValues(column) {
  const values = column.top_values.map((v) => String(v));
  const counts = column.top_counts ?? null;
  const max = counts ? Math.max(1, ...counts) : 1;
  const row = FONT + 10;
  const labelWidth = 128;
  const fits = Math.floor((labelWidth - 6) / CHAR);
  const countWidth = counts ? Math.ceil(Math.max(...counts.map((c) => humanNumber(c).length)) * CHAR) + 6 : 0;
  const rows = values.map((value, i) => {
    const width = counts ? (counts[i] / max) * (WIDTH - labelWidth - countWidth) : WIDTH - labelWidth;
    const cut = value.length > fits;
    const says = counts ? `${value}: ${humanNumber(counts[i])} row${counts[i] === 1 ? "" : "s"}` : `${value}: one of the most frequent values`;
    return svg("g", {},
      svg("text", { x: labelWidth - 6, y: i * row + row / 2 + FONT * 0.35, "text-anchor": "end" },
        cut ? `${value.slice(0, fits - 1)}…` : value, cut ? tooltip(value) : ""),
      svg("rect", { class: "bar", x: labelWidth, y: i * row + 3, width: Math.max(1, width).toFixed(1), height: row - 6 }, tooltip(says)),
      counts ? svg("text", { x: (labelWidth + width + 4).toFixed(1), y: i * row + row / 2 + FONT * 0.35 }, humanNumber(counts[i])) : "");
  });
  return svg("svg", {
    class: "chart", viewBox: `0 0 ${WIDTH} ${Math.max(row, values.length * row)}`, role: "img",
    "aria-label": `Most frequent values of ${column.name}: ${values.map((v, i) => (counts ? `${v} (${humanNumber(counts[i])})` : v)).join(", ")}`,
  }, ...rows);
}

function show(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") return humanDecimal(value);
  return String(value);
}

/** A date or timestamp column's minimum and maximum, as its histogram tells them
 * (`timeRange`, which the page's JSON-LD reads too): the first edge is the minimum; the maximum
 * lies in the last bin, exactly known when that bin is one day (or, shown to the minute, one
 * minute) wide. */
function timeExtent(column) {
  const range = timeRange(column);
  if (!range) return null;
  const from = edgeLabel(range.last);
  const to = range.latest ? edgeLabel(range.latest) : null;
  return { min: edgeLabel(range.min), max: !to || to === from ? from : `between ${from} and ${to}` };
}

/** Why a column has no chart, in a sentence. */
function noChart(column, rows, withheld) {
  if (withheld) return h("p", { class: "empty" }, "Shared by approval: its values are shown to those granted access.");
  const why = rows === 0 ? "The dataset has no rows"
    : column.null_count >= rows ? `Every value is null (${humanNumber(rows)} of ${humanNumber(rows)} rows)`
      : "Its statistics hold neither a histogram nor frequent values";
  return h("p", { class: "empty" }, `${why}: there is nothing to chart.`);
}

/** One column's card; `withheld`: the answer leaves out the values drawn from the rows (an
 * `approval` dataset, for someone not granted access). */
function columnCard(column, index, rows, withheld = false) {
  const times = column.min === null || column.min === undefined ? timeExtent(column) : null;
  const stats = [
    ["Nulls", `${humanNumber(column.null_count)} (${column.null_percent}%)`],
    ["Unique", humanNumber(column.unique_count) + (column.approximate ? " (approx.)" : "")],
    ["Mean", show(column.mean)], ["Std", show(column.std)], ["Min", times ? times.min : show(column.min)],
    ["Median", show(column.median)], ["Max", times ? times.max : show(column.max)],
  ];
  let chart;
  if (column.histogram) chart = histogram(column);
  else if (column.top_values.length) chart = topValues(column);
  else chart = noChart(column, rows, withheld);
  // An id of the card's own: a column's name may hold spaces or anything else.
  const id = `col-${index}`;
  return h("section", { class: "column", "aria-labelledby": id },
    h("h3", { id }, column.name, " ", h("span", { class: "dtype" }, column.dtype)),
    chart,
    h("div", { class: "table-box" },
      h("table", {}, h("tbody", {}, stats.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, v)))))),
    column.sample_values.length ? h("p", { class: "samples" }, "Samples: ", column.sample_values.map(show).join(" · ")) : null);
}

// ---------------------------------------------------------------------------------------------
// The download panel

/** The name a download is saved under: the data endpoint's presigned URL names it so
 * (`response-content-disposition`), since a browser ignores `download` on another origin. */
function fileName(slug, version) {
  return `${slug}-v${version}.parquet`;
}

function snippets(url, file) {
  return [
    ["curl", `curl -fsS -o ${file} '${url}'`],
    ["pandas", `import pandas as pd\ndf = pd.read_parquet("${url}")`],
    ["DuckDB", `INSTALL httpfs; LOAD httpfs;\nSELECT * FROM read_parquet('${url}') LIMIT 10;`],
  ];
}

/** The key chosen in the download panel `form` (its key of this tab, or the pasted one), or
 * undefined for none. The data table reads rows with it too. */
function keyOf(form) {
  if (!form) return undefined;
  const choice = form.elements["key-choice"]?.value ?? "";
  if (choice === "paste") return form.querySelector("#pasted-key").value.trim() || undefined;
  if (choice.startsWith("mine:")) return tabKeys().find((k) => `mine:${k.id}` === choice)?.secret;
  return undefined;
}

/** The download panel's answer for a version of many files: each file has its own link, in
 * the Files section's list (listed again now, with the chosen key), and the listing itself is
 * one call away for a script. */
async function manyFilesLinks(d, result) {
  const { apiBase } = await config();
  const listing = `${new URL(apiBase, location.href).href}/datasets/${encodeURIComponent(d.slug)}/data`;
  const text = `curl -fsS -H "x-api-key: $KEY" '${listing}?page_size=1000'`;
  const copyButton = h("button", { type: "button", class: "secondary", onclick: () => copy(copyButton, text) }, "Copy curl");
  fill(result,
    h("p", {}, h("strong", {}, `${humanNumber(d.files.count)} files, ${humanBytes(d.size)}. `),
      "Each file has its own link, in the list under ", h("a", { href: "#files-heading" }, "Files"), " below."),
    h("div", {}, h("h3", {}, "The list as JSON"), h("pre", {}, h("code", {}, text)), copyButton));
  const section = document.querySelector(".files-section");
  await section?.showFiles();
  section?.scrollIntoView({ block: "start" });
}

async function downloadPanel(d) {
  const keyless = d.access.mode === "keyless";
  const signedIn = await session();
  const mine = signedIn ? tabKeys() : [];
  const result = h("div", { id: "download-result", "aria-live": "polite" });
  const pasted = h("input", { type: "password", id: "pasted-key", autocomplete: "off", spellcheck: "false", placeholder: "dcat_…", "aria-label": "API key" });
  const choices = [];
  if (keyless) choices.push(["none", `No key (keyless until ${humanDate(d.access.keyless_until)})`]);
  for (const k of mine) choices.push([`mine:${k.id}`, `My key “${k.label}”`]);
  choices.push(["paste", "Paste a key"]);
  const radios = choices.map(([value, text], i) => h("label", { class: "choice" },
    h("input", { type: "radio", name: "key-choice", value, checked: i === 0 }), text));
  const button = h("button", { type: "submit" }, d.files ? "Get the files' links" : "Get a download link");
  const form = h("form", {
    class: "panel", id: "download",
    onsubmit: async (event) => {
      event.preventDefault();
      const choice = form.elements["key-choice"].value;
      const key = keyOf(form);
      if (choice === "paste" && !key) {
        fill(result, h("p", { class: "error" }, "Paste an API key first, or choose another option."));
        pasted.focus();
        return;
      }
      if (d.files) {
        await manyFilesLinks(d, result);
        return;
      }
      button.disabled = true;
      fill(result, h("p", { class: "status" }, "Asking for a link…"));
      try {
        const link = await api(`/datasets/${encodeURIComponent(d.slug)}/data`, { key });
        const expires = Date.parse(link.expires_at);
        const file = fileName(d.slug, link.version);
        fill(result,
          h("p", {}, h("strong", {}, "Your link is ready. "), `It expires at ${humanDate(link.expires_at)} (in ${humanDuration(expires - Date.now())}).`),
          h("p", {}, h("a", { href: link.url, id: "download-link", download: file }, `Download ${file}`),
            ` · ${humanBytes(link.size_bytes)} · version ${link.version}`),
          h("p", { class: "samples" }, "SHA-256: ", h("code", { id: "download-sha256" }, link.sha256)),
          snippets(link.url, file).map(([name, text]) => {
            const copyButton = h("button", { type: "button", class: "secondary", onclick: () => copy(copyButton, text) }, `Copy ${name}`);
            return h("div", {}, h("h3", {}, name), h("pre", {}, h("code", {}, text)), copyButton);
          }));
      } catch (error) {
        fill(result, h("p", { class: "error", role: "alert" }, explain(error)));
      } finally {
        button.disabled = false;
      }
    },
  },
  h("fieldset", {}, h("legend", {}, "Which key?"), ...radios, h("div", { class: "row" }, pasted)),
  h("p", { class: "samples" }, keyless ? "" : "This dataset needs a read key. ",
    signedIn ? h("a", { href: "account.html" }, "Manage your API keys") : h("a", { href: "account.html" }, "Sign in to create a key")),
  button, result);
  // Typing a key chooses it (only focusing the field, while tabbing past it, does not).
  pasted.addEventListener("input", () => {
    form.querySelector("input[value=paste]").checked = true;
  });
  return form;
}

// ---------------------------------------------------------------------------------------------

function facts(d) {
  // The downloads of the last 30 days; an answer without them (an older API) shows no row.
  const downloads = downloadCount(d);
  const rows = [
    ["Slug", h("code", {}, d.slug)], ["ID", h("code", { id: "dataset-id" }, d.id)],
    ["License", d.license], ["Source", /^https?:\/\//.test(d.source) ? h("a", { href: d.source, rel: "noopener" }, d.source) : d.source],
    ["Category", h("a", { href: `./?category=${encodeURIComponent(d.category)}` }, d.category)],
    ["Tags", d.tags.length ? d.tags.map((t) => h("a", { class: "tag", href: `./?tag=${encodeURIComponent(t)}` }, t)) : "–"],
    ["Size", humanBytes(d.size)], ["Rows × columns", `${humanNumber(d.row_count)} × ${humanNumber(d.column_count)}`],
    downloads === null ? null : ["Downloads (30 days)", h("span", { id: "download-count" }, downloads ? humanNumber(downloads) : "None")],
    ["Version", `${d.version}, published ${humanDate(d.published_at)}`], [d.files ? "Manifest SHA-256" : "SHA-256", h("code", { id: "sha256" }, d.sha256)],
    d.files ? ["Files", h("span", { id: "file-count" }, humanNumber(d.files.count))] : null,
    ["Created", humanDate(d.created_at)], ["Updated", humanDate(d.updated_at)],
    ["Access", d.access.mode === "keyless" ? `No key needed until ${humanDate(d.access.keyless_until)}`
      : d.access.level === "approval" ? "A read key of an account granted access" : "A read-scoped API key is required"],
  ];
  return h("dl", { class: "facts" }, rows.filter(Boolean).flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

function cardsOf(d) {
  return d.schema.map((column, i) => columnCard(column, i, d.row_count, d.values_withheld === true));
}

/** The column cards; a version of many files in splits offers each split's own statistics
 * (the metadata's `?split=`), the whole version's first. */
function columns(d) {
  const cards = h("div", { class: "columns", id: "columns" }, cardsOf(d));
  const choice = splitSelect(d, "columns-split", "Statistics of ", { every: true });
  const select = choice?.querySelector("select");
  select?.addEventListener("change", async () => {
    const split = select.value;
    cards.setAttribute("aria-busy", "true");
    try {
      const shown = split
        ? await api(`/datasets/${encodeURIComponent(d.slug)}?split=${encodeURIComponent(split)}`)
        : d;
      if (select.value === split) cards.replaceChildren(...cardsOf(shown));
    } catch (error) {
      cards.replaceChildren(h("p", { class: "error" }, explain(error)));
    } finally {
      cards.removeAttribute("aria-busy");
    }
  });
  return h("section", { class: "columns-section", "aria-labelledby": "columns-heading" },
    h("h2", { id: "columns-heading" }, `Columns (${humanNumber(d.column_count)})`),
    choice, cards);
}

// The dataset card (its README), rendered by readme.js (`cardModule`: imported with marked and
// DOMPurify, only for a dataset that has a card, before the page is shown, so that the card
// does not push the page down as it arrives). Without the module, its Markdown as plain text.
function card(d, cardModule, error) {
  const body = h("div", { class: "card-body" });
  if (cardModule) body.append(cardModule.renderCard(d.readme));
  else fill(body, h("p", { class: "error" }, `The card could not be formatted (${error?.message}); its text:`),
    h("pre", { class: "card-source" }, d.readme));
  return h("section", { class: "card", "aria-labelledby": "card-heading" },
    h("h2", { id: "card-heading" }, "Dataset card"), body);
}

// The SQL console (console.js and DuckDB-WASM) loads only when opened.
function sqlConsole(d) {
  const button = h("button", { type: "button", class: "secondary", id: "open-console" }, "Open the SQL console");
  const slot = h("p", {}, button);
  button.addEventListener("click", () => {
    button.disabled = true;
    import("./console.js").then((m) => m.openConsole(slot, d))
      .catch((error) => slot.replaceChildren(h("span", { class: "error" }, `The SQL console could not load: ${error.message}`)));
  });
  return [h("h2", { id: "console-heading" }, "SQL console"), slot];
}

/** The page's schema.org `Dataset` (linked.js), in <head>, for search engines. */
async function linkedData(d) {
  const { apiBase } = await config();
  const catalogUrl = `${location.origin}/`;
  placeJsonLd("dataset-jsonld", datasetJsonLd(d, {
    apiBase: new URL(apiBase, location.href).href,
    pageUrl: datasetPageUrl(catalogUrl, d.slug),
    catalogUrl,
  }));
}

// A dataset with a card waits for readme.js (and its libraries) before it is shown. `said`: a
// sentence for the members' panel (after a save or a rollback there).
function showDataset(d, said) {
  if (!d.readme) return render(d, null, null, said);
  return import("./readme.js").then((m) => render(d, m, null, said), (error) => render(d, null, error, said));
}

/** The panel of an organisation's members (editor.js, imported only for them: docs/site.md):
 * the versions, and for its editors and admins the edit form; `said` shown in it. */
async function membersPanel(d, pages, said) {
  const org = orgOf(d.slug);
  if (!pages.has(org) && !pages.has("*")) return;
  try {
    const editor = await import("./editor.js");
    const role = await editor.roleIn(org);
    if (!role) return;
    const panel = await editor.membersPanel(d, role, (text) => load(text), said);
    document.getElementById("members-slot")?.replaceWith(panel);
  } catch (error) {
    document.getElementById("members-slot")?.replaceChildren(h("p", { class: "error" }, explain(error)));
  }
}

function render(d, cardModule, cardError, said) {
  const org = orgOf(d.slug);
  document.title = `${org ? `${org} / ` : ""}${d.name} · Dataset catalog`;
  linkedData(d);
  // The page's sections in order; the access and download slots are filled once their panels
  // are ready. A section after the column charts is added after `columns(d)`.
  fill(article,
    h("h1", {}, orgMark(d.slug), d.name, " ", accessBadge(d.keyless_until, d.access?.level)),
    d.description ? h("p", { class: "description" }, d.description) : null,
    d.readme ? card(d, cardModule, cardError) : null,
    facts(d),
    h("div", { id: "members-slot" }),
    h("h2", {}, "Insights"), h("p", {}, d.insights || "–"),
    // A dataset's discussions are left out: the site has no page for them yet (docs/site.md).
    d.access.level === "approval" ? h("div", { id: "access-slot" }) : null,
    h("h2", { id: "download-heading" }, "Download"),
    h("div", { id: "download-slot" }),
    d.files ? filesSection(d, () => keyOf(document.getElementById("download"))) : null,
    rowsSection(d, () => keyOf(document.getElementById("download"))),
    sqlConsole(d),
    columns(d));
  article.hidden = false;
  status.textContent = "";
  // An organisation's dataset: its organisation links to its page for its members.
  if (org) {
    orgPages([d.slug]).then((orgs) => {
      article.querySelector("h1 .org-mark")?.replaceWith(orgMark(d.slug, orgs));
      return membersPanel(d, orgs, said);
    });
  }
  downloadPanel(d).then((panel) => document.getElementById("download-slot").replaceWith(panel));
  if (d.access.level === "approval") {
    accessPanel(d).then((panel) => document.getElementById("access-slot").replaceWith(panel));
  }
}

/** A private dataset (the metadata answers the site 404) for its organisation's members:
 * editor.js builds its page from the organisation's routes; null for anyone else. */
async function privatePage(said) {
  const pages = await orgPages([slug]);
  if (!pages.has(orgOf(slug)) && !pages.has("*")) return null;
  const editor = await import("./editor.js");
  const role = await editor.roleIn(orgOf(slug));
  const d = role && await editor.privateDataset(slug).catch(() => null);
  if (!d) return null;
  document.title = `${orgOf(slug)} / ${d.name} · Dataset catalog`;
  fill(article, editor.privateHead(d, pages));
  article.hidden = false;
  status.textContent = "";
  const panel = await editor.membersPanel(d, role, (text) => load(text), said);
  document.getElementById("members-slot")?.replaceWith(panel);
  return d;
}

/** Fetches the dataset and draws its page (again, after a member's save or rollback). */
function load(said) {
  return api(`/datasets/${encodeURIComponent(slug)}`)
    .then((d) => showDataset(d, said))
    .catch(async (error) => {
      if (error.status === 404 && orgOf(slug) && storedSession() && await privatePage(said).catch(() => null)) return;
      fill(status, h("span", { class: "error" }, explain(error)), " ", h("a", { href: "./" }, "Browse the catalog"));
    });
}

header();
if (!slug) {
  fill(status, h("span", { class: "error" }, "No dataset named. "), h("a", { href: "./" }, "Browse the catalog"));
} else {
  load();
}

// A dataset's page: everything the metadata endpoint returns (one request), a chart per
// column, the access section of a dataset shared by approval, and the download panel.
import { api, explain } from "./api.js";
import { accessBadge, copy, h, header } from "./dom.js";
import { humanBytes, humanDate, humanDuration, humanNumber } from "./format.js";
import { accessPanel } from "./request.js";
import { session, tabKeys } from "./session.js";

const slug = new URLSearchParams(location.search).get("slug") ?? "";
const status = document.getElementById("status");
const article = document.getElementById("dataset");

// ---------------------------------------------------------------------------------------------
// Charts: small inline SVG, drawn from the statistics the metadata carries

// Whether a discussion's path stays on this site once the browser resolves it (a URL parser
// drops tabs and newlines and reads a backslash as "/", so "/<backslash>evil.example" would be
// another site).
// Publish refuses such paths; this guards anything stored before it did.
function onThisSite(path) {
  if (typeof path !== "string" || !/^\/(?![\/\\])/.test(path) || /[\s\\]/.test(path)) return false;
  try {
    return new URL(path, location.origin).origin === location.origin;
  } catch {
    return false;
  }
}

const WIDTH = 320;
const HEIGHT = 120;
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  element.append(...children);
  return element;
}

function edgeLabel(value) {
  if (typeof value === "number") return Number.isInteger(value) ? humanNumber(value) : value.toPrecision(4);
  const text = String(value);
  // Timestamps to the minute (a last edge may sit a microsecond past the maximum).
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(text) ? text.slice(0, 16).replace("T", " ") : text;
}

/** A histogram: one bar per bin, the first and last edges below. */
function histogram(column) {
  const { bin_edges: edges, counts } = column.histogram;
  const max = Math.max(1, ...counts);
  const barWidth = WIDTH / counts.length;
  const chartHeight = HEIGHT - 16;
  const bars = counts.map((count, i) => {
    const height = (count / max) * (chartHeight - 4);
    return svg("rect", {
      class: "bar", x: (i * barWidth + 1).toFixed(1), y: (chartHeight - height).toFixed(1),
      width: Math.max(1, barWidth - 2).toFixed(1), height: height.toFixed(1),
    }, svg("title", {}, `${edgeLabel(edges[i])} to ${edgeLabel(edges[i + 1])}: ${humanNumber(count)}`));
  });
  const total = counts.reduce((a, b) => a + b, 0);
  return svg("svg", {
    class: "chart", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img",
    "aria-label": `Histogram of ${column.name}: ${counts.length} bins from ${edgeLabel(edges[0])} to ${edgeLabel(edges[edges.length - 1])}, ${humanNumber(total)} values`,
  }, ...bars,
  svg("text", { x: 0, y: HEIGHT - 2 }, edgeLabel(edges[0])),
  svg("text", { x: WIDTH, y: HEIGHT - 2, "text-anchor": "end" }, edgeLabel(edges[edges.length - 1])));
}

/** The top values as horizontal bars (their counts when the statistics carry them). */
function topValues(column) {
  const values = column.top_values;
  const counts = column.top_counts ?? values.map(() => 1);
  const max = Math.max(1, ...counts);
  const row = 20;
  const labelWidth = 120;
  const rows = values.map((value, i) => {
    const width = (counts[i] / max) * (WIDTH - labelWidth - 50);
    const label = String(value).length > 18 ? `${String(value).slice(0, 17)}…` : String(value);
    return svg("g", {},
      svg("text", { x: labelWidth - 4, y: i * row + 14, "text-anchor": "end" }, label),
      svg("rect", { class: "bar", x: labelWidth, y: i * row + 4, width: Math.max(1, width).toFixed(1), height: row - 6 }),
      column.top_counts ? svg("text", { x: labelWidth + width + 4, y: i * row + 14 }, humanNumber(counts[i])) : "");
  });
  return svg("svg", {
    class: "chart", viewBox: `0 0 ${WIDTH} ${Math.max(row, values.length * row)}`, role: "img",
    "aria-label": `Most frequent values of ${column.name}: ${values.map((v, i) => column.top_counts ? `${v} (${counts[i]})` : v).join(", ")}`,
  }, ...rows);
}

function show(value) {
  if (value === null || value === undefined) return "–";
  if (typeof value === "number") return Number.isInteger(value) ? humanNumber(value) : value.toPrecision(6).replace(/\.?0+$/, "");
  return String(value);
}

function columnCard(column) {
  const stats = [
    ["Nulls", `${humanNumber(column.null_count)} (${column.null_percent}%)`],
    ["Unique", humanNumber(column.unique_count) + (column.approximate ? " (approx.)" : "")],
    ["Mean", show(column.mean)], ["Std", show(column.std)], ["Min", show(column.min)],
    ["Median", show(column.median)], ["Max", show(column.max)],
  ];
  let chart = null;
  if (column.histogram) chart = histogram(column);
  else if (column.top_values.length) chart = topValues(column);
  return h("section", { class: "column", "aria-labelledby": `col-${column.name}` },
    h("h3", { id: `col-${column.name}` }, column.name, " ", h("span", { class: "dtype" }, column.dtype)),
    chart,
    h("table", {}, h("tbody", {}, ...stats.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, v))))),
    column.sample_values.length ? h("p", { class: "samples" }, "Samples: ", column.sample_values.map(show).join(" · ")) : null);
}

// ---------------------------------------------------------------------------------------------
// The download panel

function snippets(url, name) {
  const file = `${name}.parquet`;
  return [
    ["curl", `curl -fsS -o ${file} '${url}'`],
    ["pandas", `import pandas as pd\ndf = pd.read_parquet("${url}")`],
    ["DuckDB", `INSTALL httpfs; LOAD httpfs;\nSELECT * FROM read_parquet('${url}') LIMIT 10;`],
  ];
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
  const button = h("button", { type: "submit" }, "Get a download link");
  const form = h("form", {
    class: "panel", id: "download",
    onsubmit: async (event) => {
      event.preventDefault();
      const choice = form.elements["key-choice"].value;
      let key;
      if (choice === "paste") key = pasted.value.trim();
      else if (choice.startsWith("mine:")) key = mine.find((k) => `mine:${k.id}` === choice)?.secret;
      if (choice === "paste" && !key) {
        result.replaceChildren(h("p", { class: "error" }, "Paste an API key first, or choose another option."));
        pasted.focus();
        return;
      }
      button.disabled = true;
      result.replaceChildren(h("p", { class: "status" }, "Asking for a link…"));
      try {
        const link = await api(`/datasets/${encodeURIComponent(d.slug)}/data`, { key });
        const expires = Date.parse(link.expires_at);
        result.replaceChildren(
          h("p", {}, h("strong", {}, "Your link is ready. "), `It expires at ${humanDate(link.expires_at)} (in ${humanDuration(expires - Date.now())}).`),
          h("p", {}, h("a", { href: link.url, id: "download-link", download: `${d.slug}.parquet` }, `Download ${d.slug}.parquet`),
            ` · ${humanBytes(link.size_bytes)} · version ${link.version}`),
          h("p", { class: "samples" }, "SHA-256: ", h("code", { id: "download-sha256" }, link.sha256)),
          ...snippets(link.url, d.slug).map(([name, text]) => {
            const copyButton = h("button", { type: "button", class: "secondary", onclick: () => copy(copyButton, text) }, `Copy ${name}`);
            return h("div", {}, h("h3", {}, name), h("pre", {}, h("code", {}, text)), copyButton);
          }));
      } catch (error) {
        result.replaceChildren(h("p", { class: "error", role: "alert" }, explain(error)));
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

function render(d) {
  document.title = `${d.name} · Dataset catalog`;
  const facts = [
    ["Slug", h("code", {}, d.slug)], ["License", d.license], ["Source", /^https?:\/\//.test(d.source) ? h("a", { href: d.source, rel: "noopener" }, d.source) : d.source],
    ["Category", h("a", { href: `./?category=${encodeURIComponent(d.category)}` }, d.category)],
    ["Tags", d.tags.length ? d.tags.map((t) => h("a", { class: "tag", href: `./?tag=${encodeURIComponent(t)}` }, t)) : "–"],
    ["Size", humanBytes(d.size)], ["Rows × columns", `${humanNumber(d.row_count)} × ${humanNumber(d.column_count)}`],
    ["Version", `${d.version}, published ${humanDate(d.published_at)}`], ["SHA-256", h("code", { id: "sha256" }, d.sha256)],
    ["Created", humanDate(d.created_at)], ["Updated", humanDate(d.updated_at)],
    ["Access", d.access.mode === "keyless" ? `No key needed until ${humanDate(d.access.keyless_until)}`
      : d.access.level === "approval" ? "A read key of an account granted access" : "A read-scoped API key is required"],
  ];
  article.replaceChildren(
    h("h1", {}, d.name, " ", accessBadge(d.keyless_until, d.access?.level)),
    d.description ? h("p", {}, d.description) : null,
    h("dl", { class: "facts" }, ...facts.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
    h("h2", {}, "Insights"), h("p", {}, d.insights || "–"),
    h("h2", {}, "Discussions"),
    d.discussions.length
      ? h("ul", {}, ...d.discussions.map((x) => h("li", {}, onThisSite(x.path) ? h("a", { href: x.path }, x.title) : x.title)))
      : h("p", {}, "No discussions yet."),
    d.access.level === "approval" ? h("div", { id: "access-slot" }) : null,
    h("h2", { id: "download-heading" }, "Download"),
    h("div", { id: "download-slot" }),
    h("h2", {}, `Columns (${d.column_count})`),
    h("div", { class: "columns" }, ...d.schema.map(columnCard)));
  article.hidden = false;
  status.textContent = "";
  downloadPanel(d).then((panel) => document.getElementById("download-slot").replaceWith(panel));
  if (d.access.level === "approval") {
    accessPanel(d).then((panel) => document.getElementById("access-slot").replaceWith(panel));
  }
}

header();
if (!slug) {
  status.replaceChildren(h("span", { class: "error" }, "No dataset named. "), h("a", { href: "./" }, "Browse the catalog"));
} else {
  api(`/datasets/${encodeURIComponent(slug)}`)
    .then(render)
    .catch((error) => status.replaceChildren(h("span", { class: "error" }, explain(error)), " ", h("a", { href: "./" }, "Browse the catalog")));
}

// The catalog page: search, filters, sort and paging, all in the page's URL.
import { api, explain } from "./api.js";
import { accessBadge, fill, h, header, orgMark, orgPages } from "./dom.js";
import { downloadCount, humanBytes, humanDownloads, humanNumber } from "./format.js";
import { catalogJsonLd, placeJsonLd } from "./linked.js";

const PAGE_SIZE = 12;
const FIELDS = ["q", "category", "tag", "license", "sort"];
const form = document.getElementById("filters");
const list = document.getElementById("datasets");
const status = document.getElementById("status");
const pages = document.getElementById("pages");
// The filters' suggestions: each facet's datalist.
const SUGGESTIONS = { category: "categories", tag: "tags", license: "licenses" };
// Facets (every category, tag and license in the catalog, with counts) come once, with the
// page's first list request.
let facetsWanted = true;
// The number of the latest list asked for: an earlier one answered later (a slow search, then
// another) is dropped.
let latest = 0;

function state() {
  const params = new URLSearchParams(location.search);
  const page = Math.max(1, Number.parseInt(params.get("page") ?? "1", 10) || 1);
  return { params, page };
}

function href(params, page) {
  const next = new URLSearchParams();
  for (const field of FIELDS) {
    const value = params.get(field);
    if (value) next.set(field, value);
  }
  if (page > 1) next.set("page", String(page));
  const query = next.toString();
  return query ? `?${query}` : "./";
}

/** A dataset's card; `orgs`: the organisations whose page the person may open (`orgPages`). */
function entry(d, orgs) {
  const downloads = humanDownloads(downloadCount(d));
  return h("li", {},
    h("h2", {}, orgMark(d.slug, orgs), h("a", { href: `dataset.html?slug=${encodeURIComponent(d.slug)}` }, d.name), " ", accessBadge(d.keyless_until, d.access_level)),
    d.description ? h("p", {}, d.description) : null,
    h("p", { class: "meta" },
      h("span", {}, "Category: ", h("a", { href: href(new URLSearchParams({ category: d.category }), 1) }, d.category)),
      h("span", {}, "License: ", d.license),
      h("span", {}, humanBytes(d.size)),
      h("span", {}, `${humanNumber(d.row_count)} rows × ${humanNumber(d.column_count)} columns`),
      downloads ? h("span", { class: "downloads" }, downloads) : null),
    d.tags.length ? h("p", {}, ...d.tags.map((t) => h("a", { class: "tag", href: href(new URLSearchParams({ tag: t }), 1) }, t))) : null);
}

/** The page's schema.org `DataCatalog` (linked.js), in <head>: the datasets shown. */
function linkedData(items) {
  placeJsonLd("catalog-jsonld", catalogJsonLd(items, {
    catalogUrl: `${location.origin}/`,
    description: document.querySelector('meta[name="description"]')?.content,
  }));
}

/** Offers every value of each facet, with its count, once each. A list answer without
 * `facets` (an API from before them) leaves the suggestions empty. */
function suggest(facets) {
  if (!facets || typeof facets !== "object") return;
  for (const [field, id] of Object.entries(SUGGESTIONS)) {
    const seen = new Set();
    const options = [];
    for (const facet of Array.isArray(facets[field]) ? facets[field] : []) {
      if (typeof facet?.value !== "string" || seen.has(facet.value)) continue;
      seen.add(facet.value);
      const count = Number.isFinite(facet.count) ? ` (${humanNumber(facet.count)})` : "";
      options.push(h("option", { value: facet.value, label: `${facet.value}${count}` }));
    }
    fill(document.getElementById(id), options);
  }
}

async function load() {
  const asked = ++latest;
  const { params, page } = state();
  for (const field of FIELDS) form.elements[field].value = params.get(field) ?? "";
  const query = new URLSearchParams({ page: String(page), page_size: String(PAGE_SIZE) });
  const withFacets = facetsWanted;
  if (withFacets) query.set("facets", "true");
  for (const field of FIELDS) {
    const value = params.get(field)?.trim();
    if (value) query.set(field, value);
  }
  status.textContent = "Loading…";
  list.setAttribute("aria-busy", "true");
  try {
    const result = await api(`/datasets?${query}`);
    if (asked !== latest) return;
    const orgs = await orgPages(result.items.map((d) => d.slug));
    if (asked !== latest) return;
    fill(list, result.items.map((d) => entry(d, orgs)));
    linkedData(result.items);
    if (withFacets) {
      facetsWanted = false;
      suggest(result.facets);
    }
    const last = Math.max(1, Math.ceil(result.total / PAGE_SIZE));
    const ignored = result.ignored_words?.length
      ? ` · too common to search for, left out: ${result.ignored_words.join(", ")}`
      : "";
    status.textContent = (result.total === 0
      ? "No dataset matches. Try fewer words or filters."
      : `${humanNumber(result.total)} dataset${result.total === 1 ? "" : "s"} · page ${page} of ${last}`) + ignored;
    fill(pages,
      page > 1 ? h("a", { href: href(params, page - 1), rel: "prev" }, "← Previous") : null,
      page < last ? h("a", { href: href(params, page + 1), rel: "next" }, "Next →") : null);
    performance.mark("list-drawn");
  } catch (error) {
    if (asked !== latest) return;
    list.replaceChildren();
    pages.replaceChildren();
    linkedData([]);
    fill(status, h("span", { class: "error" }, explain(error)));
  } finally {
    if (asked === latest) list.removeAttribute("aria-busy");
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const params = new URLSearchParams();
  for (const field of FIELDS) {
    const value = form.elements[field].value.trim();
    if (value) params.set(field, value);
  }
  history.pushState(null, "", href(params, 1));
  load();
});
document.getElementById("clear").addEventListener("click", () => {
  history.pushState(null, "", "./");
  load();
});
window.addEventListener("popstate", load);

header();
load();

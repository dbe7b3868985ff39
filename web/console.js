// The dataset page's SQL console: SQL over the dataset's Parquet file, in the browser, with
// DuckDB-WASM. Loaded (with DuckDB) only when the person opens it: dataset.js imports this
// module on the button's click.
//
// `data` is a view over the file at a presigned URL from the data endpoint (the key chosen in
// the download panel, or none in a keyless window). DuckDB reads the file with HTTP range
// requests, so a query that needs a few columns or row groups fetches a fraction of it. A
// query's result is kept in DuckDB (`console_result`), shown as a table, and exported from it as
// CSV or Parquet without running the query again; in the CSV, a cell that would start a
// spreadsheet formula gets a single quote in front (csv.js).
import * as duckdb from "./vendor/duckdb/duckdb-browser.mjs";
import { api, explain } from "./api.js";
import { neutralizeCsv } from "./csv.js";
import { h } from "./dom.js";
import { allFiles, splitSelect } from "./files.js";
import { humanBytes, humanNumber } from "./format.js";
import { valueCell } from "./rows.js";
import { tabKeys } from "./session.js";

const DEFAULT_QUERY = "SELECT * FROM data LIMIT 10";
/** Rows shown; the exports hold all of them. */
const SHOWN_ROWS = 1000;
/** A link is renewed when it would expire within this long (a query may take a while). */
const RENEW_BEFORE_MS = 60_000;

/** DuckDB in a worker of its own, with remote extensions off: parquet is built into the bundle,
 * and nothing is fetched from outside this site and the data bucket (the page's policy allows
 * no other origin anyway). */
async function startDuckDB(channel) {
  const here = (path) => new URL(path, location.href).href;
  const worker = new Worker(here("console-worker.js"), { name: channel });
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
  await db.instantiate(here("vendor/duckdb/duckdb-eh.wasm"));
  // Ranges only: never a silent download of the whole file.
  await db.open({ filesystem: { reliableHeadRequests: true, allowFullHTTPReads: false } });
  const conn = await db.connect();
  await conn.query("SET autoinstall_known_extensions = false");
  await conn.query("SET autoload_known_extensions = false");
  return { db, conn };
}

/** The key the download panel has chosen: `{choice, key}`, or `{choice, missing}` when a key is
 * to be pasted and is not. */
function chosenKey() {
  const form = document.getElementById("download");
  const choice = form?.elements["key-choice"]?.value ?? "none";
  if (choice === "paste") {
    const key = document.getElementById("pasted-key")?.value.trim();
    return key ? { choice: `paste:${key}`, key } : { choice, missing: true };
  }
  if (choice.startsWith("mine:")) {
    return { choice, key: tabKeys().find((k) => `mine:${k.id}` === choice)?.secret };
  }
  return { choice };
}

/** What the worker has fetched so far (console-worker.js): `{bytes, requests, files}`, asked on
 * its BroadcastChannel `channel`; null if it does not answer within a second. */
function readsSoFar(channel) {
  const ask = Math.random().toString(36).slice(2);
  return new Promise((resolve) => {
    const timer = setTimeout(() => { channel.removeEventListener("message", heard); resolve(null); }, 1000);
    function heard(event) {
      if (event.data?.answer !== ask) return;
      clearTimeout(timer);
      channel.removeEventListener("message", heard);
      resolve(event.data);
    }
    channel.addEventListener("message", heard);
    channel.postMessage({ ask });
  });
}

/** What a query read, in words: the difference between the worker's counts after and before. */
function readWords(before, after) {
  if (!before || !after) return "";
  const bytes = after.bytes - before.bytes;
  const requests = after.requests - before.requests;
  if (!requests) return " Nothing was read from the data.";
  const seen = new Set(before.files);
  const files = after.files.filter((f) => !seen.has(f)).length;
  return ` Read ${humanBytes(bytes)} (${humanNumber(bytes)} bytes) of the data in ${humanNumber(requests)} request${requests === 1 ? "" : "s"}`
    + (files > 1 ? `, from ${humanNumber(files)} files.` : ".");
}

/** A name or a text as DuckDB's SQL writes it. */
const ident = (name) => `"${String(name).replaceAll('"', '""')}"`;
const literal = (text) => `'${String(text).replaceAll("'", "''")}'`;
/** The SQL type of each partition column's type (metadata `files.partition_columns`). */
const PARTITION_TYPES = { int64: "BIGINT", date: "DATE", string: "VARCHAR" };

/** One value as the table shows it. */
function shown(value) {
  if (value === null || value === undefined) return null;
  if (typeof value === "object" && !(value instanceof Date)) return JSON.stringify(value, (_, v) => (typeof v === "bigint" ? String(v) : v));
  return String(value);
}

/** An Arrow table (DuckDB's answer) as the data table above it looks (rows.js): one line per
 * row, a long value's start that expands, `NULL` in grey, the header row staying in sight.
 * `names`: the columns' names, when the table's own are not. */
function resultTable(table, names = table.schema.fields.map((f) => f.name)) {
  const columns = names.map((_, i) => table.getChildAt(i));
  const rows = [];
  for (let r = 0; r < table.numRows; r++) {
    rows.push(h("tr", {}, ...columns.map((column) => valueCell(shown(column.get(r)), { nullWord: "NULL" }))));
  }
  return h("div", { class: "table-box rows-box", tabindex: "0", role: "region", "aria-label": "The query's result" },
    h("table", { class: "rows", id: "console-table" },
      h("thead", {}, h("tr", {}, ...names.map((name) => h("th", { scope: "col" }, name)))),
      h("tbody", {}, ...rows)));
}

/** Downloads `bytes` as a file named `name`. */
function save(bytes, name, type) {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const link = h("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Opens the console in `slot` (replacing it) for dataset `d` (the metadata endpoint's answer). */
export function openConsole(slot, d) {
  const channelName = `console-reads-${Math.random().toString(36).slice(2)}`;
  const channel = new BroadcastChannel(channelName);
  const started = startDuckDB(channelName);
  let link = null; // {choice, expires} of the file(s) DuckDB reads as `data`
  let registered = []; // the names of a many-file version's files, as registered in DuckDB
  // A version of many files in splits: `data` is the chosen split's files (or every file).
  const splitChoice = d.files ? splitSelect(d, "console-split", "Split") : null;
  let result = false; // whether console_result holds the last query's result

  const sql = h("textarea", { id: "console-sql", class: "mono", rows: 5, spellcheck: "false", autocomplete: "off" });
  sql.value = DEFAULT_QUERY;
  const run = h("button", { type: "submit" }, "Run");
  const csv = h("button", { type: "button", class: "secondary", id: "console-csv", disabled: true }, "Download CSV");
  const parquet = h("button", { type: "button", class: "secondary", id: "console-parquet", disabled: true }, "Download Parquet");
  const status = h("p", { class: "status", id: "console-status", role: "status", "aria-live": "polite" }, "Loading DuckDB…");
  const output = h("div", { id: "console-result" });

  const say = (text, error = false) => status.replaceChildren(error ? h("span", { class: "error" }, text) : text);
  started.then(() => { if (!run.disabled) say("DuckDB is ready."); },
    (error) => say(`DuckDB could not start in this browser: ${error.message}`, true));

  /** Makes `data` the file at a valid link for the chosen key; a sentence when refused. */
  async function useData(db, conn) {
    const { choice, key, missing } = chosenKey();
    if (missing) throw new Error("Paste an API key in the Download section above, or choose another option there.");
    if (d.files) return useFiles(db, conn, choice, key);
    if (link && link.choice === choice && link.expires - Date.now() > RENEW_BEFORE_MS) return;
    let answer;
    try {
      answer = await api(`/datasets/${encodeURIComponent(d.slug)}/data`, { key });
    } catch (error) {
      throw new Error(`The console cannot read the data: ${explain(error)}`);
    }
    if (link) await db.dropFile("data.parquet");
    await db.registerFileURL("data.parquet", answer.url, duckdb.DuckDBDataProtocol.HTTP, false);
    await conn.query("CREATE OR REPLACE VIEW data AS SELECT * FROM read_parquet('data.parquet')");
    link = { choice, expires: Date.parse(answer.expires_at), url: answer.url };
  }

  /** A version of many files: makes `data` a view over the chosen split's files (each at its own
   * presigned URL from the data endpoint's listing, every page of it), read with DuckDB's Hive
   * partitioning: each file is registered under its path, so that a WHERE on a partition column
   * reads only the files whose path holds a matching value. The partition columns get their
   * types (DuckDB 0.9 reads them as text), Hive's null partition as NULL. */
  async function useFiles(db, conn, choice, key) {
    const split = splitChoice?.querySelector("select").value ?? "";
    const id = `${choice}\n${split}`;
    if (link && link.choice === id && link.expires - Date.now() > RENEW_BEFORE_MS) return;
    let listing;
    try {
      listing = await allFiles(d, key, split);
    } catch (error) {
      throw new Error(`The console cannot read the data: ${explain(error)}`);
    }
    if (!listing.files.length) throw new Error("There are no files to read here.");
    for (const name of registered) await db.dropFile(name);
    registered = listing.files.map((f) => `files/${f.path}`);
    await Promise.all(listing.files.map((f, i) => db.registerFileURL(registered[i], f.url, duckdb.DuckDBDataProtocol.HTTP, false)));
    const partitions = d.files.partition_columns;
    const typed = partitions.map((c) => `CAST(NULLIF(CAST(${ident(c.name)} AS VARCHAR), '__HIVE_DEFAULT_PARTITION__') AS ${PARTITION_TYPES[c.type] ?? "VARCHAR"}) AS ${ident(c.name)}`);
    await conn.query(`CREATE OR REPLACE VIEW data AS SELECT *${typed.length ? ` REPLACE (${typed.join(", ")})` : ""} `
      + `FROM read_parquet([${registered.map(literal).join(", ")}], hive_partitioning = ${partitions.length ? "true" : "false"})`);
    link = { choice: id, expires: listing.expires };
  }

  /** Runs the query; its result is kept as console_result when it is a query. */
  async function execute(conn, text) {
    try {
      await conn.query(`CREATE OR REPLACE TEMP TABLE console_result AS (\n${text}\n)`);
    } catch (error) {
      // Not a query (SET, DESCRIBE, several statements…): run as it is, shown, not exported.
      if (!String(error.message).startsWith("Parser Error")) throw error;
      return { table: await conn.query(text), kept: false };
    }
    const [{ n }] = (await conn.query("SELECT count(*)::DOUBLE AS n FROM console_result")).toArray();
    const names = (await conn.query("SELECT * FROM console_result LIMIT 0")).schema.fields.map((f) => f.name);
    // Shown as DuckDB writes each value (dates, decimals, lists…) rather than as JavaScript would.
    const table = await conn.query(`SELECT COLUMNS(*)::VARCHAR FROM console_result LIMIT ${SHOWN_ROWS}`);
    return { table, names, kept: true, rows: n };
  }

  const form = h("form", {
    id: "console", class: "panel", "aria-labelledby": "console-heading",
    onsubmit: async (event) => {
      event.preventDefault();
      const text = sql.value.trim().replace(/;\s*$/, "");
      if (!text) return say("Write a query first.", true);
      run.disabled = csv.disabled = parquet.disabled = true;
      say("Running…");
      try {
        const { db, conn } = await started;
        // What the query reads, its view's making (a file's footer, when the links are new) included.
        const before = await readsSoFar(channel);
        await useData(db, conn);
        const began = performance.now();
        const { table, names, kept, rows } = await execute(conn, text);
        result = kept;
        const seconds = ((performance.now() - began) / 1000).toFixed(2);
        const read = readWords(before, await readsSoFar(channel));
        output.replaceChildren(resultTable(table, names));
        if (!kept) say(`Done in ${seconds} s. Only a query's result (SELECT, FROM, WITH…) can be downloaded.${read}`);
        else if (rows > table.numRows) say(`${humanNumber(rows)} rows in ${seconds} s; the first ${humanNumber(table.numRows)} are shown, the downloads hold them all.${read}`);
        else say(`${humanNumber(rows)} ${rows === 1 ? "row" : "rows"} in ${seconds} s.${read}`);
      } catch (error) {
        result = false;
        output.replaceChildren();
        say(error.message, true);
      } finally {
        run.disabled = false;
        csv.disabled = parquet.disabled = !result;
      }
    },
  },
  d.files
    ? h("p", { class: "samples" }, "SQL over this dataset in your browser, with DuckDB: ", h("code", {}, "data"),
      " is the chosen split's Parquet files, read in parts as a query needs them, with the key chosen under Download",
      d.files.partition_columns.length
        ? ["; a WHERE on a partition column (", d.files.partition_columns.map((c) => c.name).join(", "), ") reads only the files that hold its values"]
        : "",
      ". DuckDB itself (about 4.3 MB compressed) loads once, now.")
    : h("p", { class: "samples" }, "SQL over this dataset in your browser, with DuckDB: ", h("code", {}, "data"),
      " is its Parquet file, read in parts as a query needs them, with the key chosen under Download. DuckDB itself (about 4.3 MB compressed) loads once, now."),
  splitChoice,
  h("label", { for: "console-sql" }, "Query"),
  sql,
  h("div", { class: "row" }, run, csv, parquet),
  status,
  output);

  /** Writes console_result as `format` and downloads it. */
  async function download(format, type) {
    const { db, conn } = await started;
    const file = `console-result.${format}`;
    const options = format === "csv" ? "FORMAT csv, HEADER" : "FORMAT parquet";
    say(`Writing ${format === "csv" ? "CSV" : "Parquet"}…`);
    try {
      await conn.query(`COPY console_result TO '${file}' (${options})`);
      let bytes = await db.copyFileToBuffer(file);
      await db.dropFile(file);
      // A cell that would start a formula in a spreadsheet gets a quote in front (csv.js).
      if (format === "csv") bytes = new TextEncoder().encode(neutralizeCsv(new TextDecoder().decode(bytes)));
      save(bytes, `${d.slug}-query.${format}`, type);
      say(`Saved ${d.slug}-query.${format}.`);
    } catch (error) {
      say(error.message, true);
    }
  }
  csv.addEventListener("click", () => download("csv", "text/csv"));
  parquet.addEventListener("click", () => download("parquet", "application/vnd.apache.parquet"));
  // Ctrl+Enter (⌘+Enter) runs the query from the editor.
  sql.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });

  slot.replaceWith(form);
  sql.focus();
  return form;
}

// CSV as the SQL console exports it, made safe to open in a spreadsheet (no build step, no
// dependency: the console imports it, and node runs its test, tests/browser/csv_cells.mjs).
//
// A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to Excel,
// LibreOffice and Google Sheets, and a dataset's text can hold one (`=HYPERLINK(…)`,
// `=cmd|' /C calc'!A0`). As OWASP's "CSV Injection" page recommends, such a cell gets a
// single quote in front, and is quoted: the spreadsheet shows the text, and runs nothing.
// A cell that is a plain number (`-12.5`, `+3`, `-1e-9`) is left as it is: a spreadsheet
// reads it as a number, never as a formula, and a negative number must stay one.

/** Whether a cell's text would start a formula. */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A plain decimal number, as DuckDB writes numbers. */
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** One cell's text, made safe: `'` in front when it would start a formula. */
export function safeCell(value) {
  return FORMULA_START.test(value) && !NUMBER.test(value) ? `'${value}` : value;
}

/** `text`, CSV as RFC 4180 writes it (`,` between cells, `"` around a cell that needs it, `""`
 * for a quote inside one, rows ending in `\n` or `\r\n`), with every cell that would start a
 * formula made safe ([`safeCell`]) and quoted; every other cell kept byte for byte. */
export function neutralizeCsv(text) {
  const out = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    // One cell, from i: its text and where it ends.
    let value;
    let raw;
    if (text[i] === '"') {
      let j = i + 1;
      let inner = "";
      for (;;) {
        const q = text.indexOf('"', j);
        if (q === -1) { inner += text.slice(j); j = n; break; }
        inner += text.slice(j, q);
        if (text[q + 1] === '"') { inner += '"'; j = q + 2; continue; }
        j = q + 1;
        break;
      }
      value = inner;
      raw = text.slice(i, j);
      i = j;
    } else {
      let j = i;
      while (j < n && text[j] !== "," && text[j] !== "\n" && text[j] !== "\r") j++;
      // A lone carriage return inside a cell (not before a newline) belongs to the cell.
      while (j < n && text[j] === "\r" && text[j + 1] !== "\n") {
        j++;
        while (j < n && text[j] !== "," && text[j] !== "\n" && text[j] !== "\r") j++;
      }
      value = raw = text.slice(i, j);
      i = j;
    }
    const safe = safeCell(value);
    out.push(safe === value ? raw : `"${safe.replaceAll('"', '""')}"`);
    // The separator after it, as it is.
    if (text[i] === ",") { out.push(","); i++; if (i === n) break; }
    else if (text[i] === "\r" && text[i + 1] === "\n") { out.push("\r\n"); i += 2; }
    else if (text[i] === "\n") { out.push("\n"); i++; }
    else if (i < n) { out.push(text[i]); i++; }
  }
  return out.join("");
}

// The SQL console's CSV export against formula injection (web/csv.js), run by node from
// tests/tests/console.rs: every cell that would start a spreadsheet formula gets a single quote
// in front and is quoted; numbers, other cells, quoting and line ends stay as they were.
import assert from "node:assert/strict";
import { neutralizeCsv, safeCell } from "../../web/csv.js";

// Each starting character OWASP names, and numbers, which stay numbers.
for (const [cell, safe] of [
  ["=1+1", "'=1+1"],
  ["+cmd", "'+cmd"],
  ["-2+3", "'-2+3"],
  ["@SUM(A1)", "'@SUM(A1)"],
  ["\tx", "'\tx"],
  ["\rx", "'\rx"],
  ["-12.5", "-12.5"],
  ["+3", "+3"],
  ["-1e-9", "-1e-9"],
  ["-", "'-"],
  ["a=b", "a=b"],
  ["", ""],
]) {
  assert.equal(safeCell(cell), safe, JSON.stringify(cell));
}

// A CSV as DuckDB writes it: header, quoted cells with commas, quotes and newlines, NULLs.
const written = [
  'id,name,"=HYPERLINK(""http://x"")",value',
  '1,"=cmd|\' /C calc\'!A0",plain,-5',
  '2,"@a, b","line\nbreak",',
  "3,+1-1,\"say \"\"hi\"\"\",-0.25",
  '4,"-x",,"\tlead"',
  "",
].join("\n");
const expected = [
  'id,name,"\'=HYPERLINK(""http://x"")",value',
  '1,"\'=cmd|\' /C calc\'!A0",plain,-5',
  '2,"\'@a, b","line\nbreak",',
  "3,\"'+1-1\",\"say \"\"hi\"\"\",-0.25",
  '4,"\'-x",,"\'\tlead"',
  "",
].join("\n");
assert.equal(neutralizeCsv(written), expected);
// Line ends are kept, CRLF too; a file with nothing to change is kept byte for byte.
assert.equal(neutralizeCsv("a,b\r\n=1,2\r\n"), "a,b\r\n\"'=1\",2\r\n");
const plain = 'x,y\n1,"a,b"\n2,"q""q"\n,\n';
assert.equal(neutralizeCsv(plain), plain);
assert.equal(neutralizeCsv(""), "");
console.log("csv cells: ok");

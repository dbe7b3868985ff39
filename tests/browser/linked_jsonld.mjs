// The dataset page's schema.org JSON-LD (web/linked.js) of a metadata answer, run by node from
// tests/tests/api/linked_files.rs: reads the answer of GET /datasets/{slug} as JSON on stdin and
// writes the Dataset node datasetJsonLd makes of it, with the API base argv[2].
import { datasetJsonLd } from "../../web/linked.js";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const answer = JSON.parse(input);
const apiBase = process.argv[2];
process.stdout.write(JSON.stringify(datasetJsonLd(answer, {
  apiBase,
  pageUrl: `${apiBase}/../../dataset.html?slug=${answer.slug}`,
  catalogUrl: `${apiBase}/../../`,
})));

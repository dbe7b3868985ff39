"""Delta Sharing's own Python connector (PyPI delta-sharing) against the local API.

Reads a JSON list of operations on stdin and prints one JSON result per operation, in order:
- {"op": "list", "profile": P}: `SharingClient(P).list_all_tables()`, as `share.schema.table`
  names (sorted), or the refusal's status and body;
- {"op": "load", "profile": P, "table": T, "version": V?, "parquet": F}: `load_as_pandas`
  (at version V when given), compared with pyarrow's reading of the file F: `equal`, and why not;
- {"op": "version", "profile": P, "table": T}: `get_table_version`;
- {"op": "metadata", "profile": P, "table": T}: `get_table_metadata`'s schema, as Delta's JSON;
- {"op": "fail", "profile": P, "table": T, "version": V?, "timestamp": S?}: a load expected to
  be refused: its status and the protocol's error body.
"""

import json
import sys

import delta_sharing
import pandas as pd
import pyarrow.parquet as pq
from requests.exceptions import HTTPError


def refusal(e):
    try:
        body = e.response.json()
    except ValueError:
        body = e.response.text
    return {"status": e.response.status_code, "body": body}


def run(op):
    profile = op["profile"]
    url = f"{profile}#{op.get('table', '')}"
    kind = op["op"]
    try:
        if kind == "list":
            tables = delta_sharing.SharingClient(profile).list_all_tables()
            return {"tables": sorted(f"{t.share}.{t.schema}.{t.name}" for t in tables)}
        if kind == "version":
            return {"version": delta_sharing.get_table_version(url)}
        if kind == "metadata":
            meta = delta_sharing.get_table_metadata(url)
            return {"schema": json.loads(meta.schema_string), "format": meta.format.provider}
        if kind == "load":
            frame = delta_sharing.load_as_pandas(url, version=op.get("version"))
            # pyarrow's reading of the same file, converted as the connector converts it.
            expected = pq.read_table(op["parquet"]).to_pandas(date_as_object=True)
            try:
                pd.testing.assert_frame_equal(frame, expected, check_exact=True)
                why = None
            except AssertionError as e:
                why = str(e)
            return {"equal": why is None, "why": why, "rows": len(frame),
                    "columns": list(frame.columns)}
        if kind == "fail":
            delta_sharing.load_as_pandas(url, version=op.get("version"),
                                         timestamp=op.get("timestamp"))
            return {"unexpected": "loaded"}
    except HTTPError as e:
        return refusal(e)
    raise ValueError(f"unknown op {kind}")


def main():
    ops = json.load(sys.stdin)
    json.dump([run(op) for op in ops], sys.stdout)


if __name__ == "__main__":
    sys.exit(main())

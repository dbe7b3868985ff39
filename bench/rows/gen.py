"""Synthetic Parquet files for `catalog-bench rows`: random-ish numbers and strings, about
100 bytes a row (five columns), written by pyarrow with a given row-group size, with or
without a page index.

    gen.py OUT ROWS ROW_GROUP PAGE_INDEX(0|1) [--wide COLUMNS]

Rows are made a million at a time, so the generator holds one chunk (or, for a single row
group, the whole table: pyarrow writes a row group per write call). Prints the file's size.
"""

import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

CHUNK = 1_000_000


def letters(rng, n, width):
    raw = rng.integers(97, 123, size=(n, width), dtype=np.uint8)
    return pa.array(raw.view(f"S{width}").ravel()).cast(pa.string())


def chunk(seed, start, n):
    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "id": pa.array(np.arange(start, start + n, dtype=np.int64)),
            "value": pa.array(rng.normal(size=n)),
            "count": pa.array(rng.integers(0, 1 << 40, size=n, dtype=np.int64)),
            "code": letters(rng, n, 24),
            "note": letters(rng, n, 40),
        }
    )


def wide(rows, columns):
    rng = np.random.default_rng(7)
    return pa.table({f"c{i:04}": pa.array(rng.normal(size=rows)) for i in range(columns)})


def main():
    out, rows, group, index = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
    if "--wide" in sys.argv:
        table = wide(rows, int(sys.argv[sys.argv.index("--wide") + 1]))
        pq.write_table(table, out, row_group_size=group, write_page_index=index)
    else:
        with pq.ParquetWriter(out, chunk(0, 0, 1).schema, write_page_index=index) as writer:
            if group > CHUNK:
                parts = [chunk(s, s, min(CHUNK, rows - s)) for s in range(0, rows, CHUNK)]
                table = pa.concat_tables(parts)
                del parts
                writer.write_table(table, row_group_size=group)
            else:
                for s in range(0, rows, CHUNK):
                    writer.write_table(chunk(s, s, min(CHUNK, rows - s)), row_group_size=group)
    meta = pq.ParquetFile(out).metadata
    print(meta.num_row_groups, meta.num_columns, flush=True)


if __name__ == "__main__":
    main()

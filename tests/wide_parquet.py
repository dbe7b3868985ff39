# Writes a wide Parquet file for tests/tests/admin/wide.rs: N columns cycling through int64,
# float64 and string, ROWS rows of ordinary values.  Usage: wide_parquet.py N ROWS PATH
import sys, pyarrow as pa, pyarrow.parquet as pq, random
def build(n_cols, rows, path, seed=7):
    rng = random.Random(seed)
    cols = {}
    for i in range(n_cols):
        k = i % 3
        if k == 0:
            cols[f"count_{i}"] = pa.array([rng.randrange(0, 10**6) for _ in range(rows)], pa.int64())
        elif k == 1:
            cols[f"measure_{i}"] = pa.array([rng.random() * 1000 for _ in range(rows)], pa.float64())
        else:
            cols[f"label_{i}"] = pa.array([f"value {rng.randrange(0, 50)} of column {i}" for _ in range(rows)], pa.string())
    pq.write_table(pa.table(cols), path)
build(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])

#!/usr/bin/env python3
"""Generate the sample Parquet datasets and their manifest for the dev stack
and the integration tests.

Usage:
    python dev/samples.py --out DIR

Writes DIR/<slug>.parquet for each sample dataset plus DIR/manifest.json.
Output is deterministic: every dataset uses a fixed random seed, nothing
depends on the clock or the network.  (The Parquet bytes, and therefore
`size` and `sha256`, embed the pyarrow version in the footer's `created_by`
field, so they are stable for a given pyarrow version.)

Only pyarrow, pandas, numpy and the standard library are used.

manifest.json
-------------
A JSON object {"datasets": [...]} with one entry per file, in this order:
air-quality-hourly, city-bikes, river-levels, bird-sightings.  Entry fields
(in this order): slug, name, description (string or null), license, source,
category, tags, insights, discussions (list of {id, title, slug, path}; id is
a string), keyless_offset_hours, file, size, sha256, row_count, column_count,
columns, schema.

keyless_offset_hours:
    null      -> the dataset is never keyless (gated).
    positive  -> the keyless window ends that many hours after seeding time.
    negative  -> the keyless window ended that many hours before seeding time.

file is the Parquet file name relative to DIR; size is its length in bytes;
sha256 is the lowercase hex SHA-256 digest of its bytes.  columns lists the
column names in file order; schema lists one Column object per column in
file order.  The JSON is written with indent 2, keys in the order described
here (nothing sorted), UTF-8, trailing newline.

Column object conventions
-------------------------
Fields exactly: name, dtype, null_count, null_percent, unique_count, mean,
std, min, max, median, top_values, sample_values.

dtype         The Arrow type string as pyarrow prints it, e.g. "int64",
              "int32", "double", "string", "bool", "date32[day]",
              "timestamp[us, tz=UTC]".
null_count    Number of nulls.  For floating columns NaN counts as null too.
null_percent  100 * null_count / row_count rounded to 4 decimals
              (0.0 if row_count is 0).
unique_count  Number of distinct non-null (and non-NaN) values.
mean, std, min, max, median
              JSON numbers for integer and floating columns, computed on the
              non-null, non-NaN values; std is the sample standard deviation
              (ddof=1).  All five are null when there are no such values;
              std is null when there are fewer than 2.  For integer columns
              min and max are JSON integers, mean/std/median JSON floats; for
              floating columns all five are JSON floats.  For every other
              dtype (string, bool, date, timestamp, ...) all five are null.
top_values    Up to 5 most frequent non-null (non-NaN) values, most frequent
              first, ties broken by value ascending.
sample_values The first up to 5 non-null (non-NaN) values in file order.

Values in top_values/sample_values are converted to JSON as: integers ->
JSON integers, floats -> JSON numbers, booleans -> true/false, strings ->
strings, dates -> "YYYY-MM-DD", timestamps -> ISO 8601 as Python's
datetime.isoformat() prints them (e.g. "2024-05-01T08:00:00+00:00").
NaN and Infinity never appear in the JSON (they are treated as null).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import sys
from collections import Counter

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

UTC = dt.timezone.utc


# --------------------------------------------------------------------------
# Helpers for building columns with nulls
# --------------------------------------------------------------------------

def with_nulls(rng: np.random.Generator, values, rate: float):
    """Return a list copy of values with roughly `rate` of entries set to None."""
    mask = rng.random(len(values)) < rate
    return [None if m else v for v, m in zip(values, mask)]


def put_nan(values, positions):
    """Force NaN at the given positions (unless the slot is already None)."""
    out = list(values)
    for p in positions:
        out[p] = float("nan")
    return out


def py_floats(arr, decimals: int):
    return [float(round(float(x), decimals)) for x in arr]


def py_ints(arr):
    return [int(x) for x in arr]


# --------------------------------------------------------------------------
# Dataset builders (each uses its own fixed seed)
# --------------------------------------------------------------------------

def build_air_quality() -> pa.Table:
    rng = np.random.default_rng(20240501)
    stations = ["AQ-CENTRAL", "AQ-NORTH", "AQ-SOUTH"]
    hours = 240
    n = len(stations) * hours  # 720 rows
    start = dt.datetime(2024, 3, 1, 0, 0, 0, tzinfo=UTC)

    station_id = [stations[i % len(stations)] for i in range(n)]
    measured_at = [start + dt.timedelta(hours=i // len(stations)) for i in range(n)]
    pm25 = py_floats(np.clip(rng.gamma(2.0, 6.0, n), 0.5, None), 1)
    no2 = py_ints(np.clip(rng.normal(22, 9, n), 0, None).round())
    temp = py_floats(
        8 + 6 * np.sin(np.arange(n) / len(stations) / 24 * 2 * math.pi)
        + rng.normal(0, 1.5, n),
        1,
    )
    is_valid = [bool(x) for x in rng.random(n) < 0.93]

    station_id = with_nulls(rng, station_id, 0.02)
    pm25 = put_nan(with_nulls(rng, pm25, 0.05), [7, 301])
    no2 = with_nulls(rng, no2, 0.08)
    temp = with_nulls(rng, temp, 0.01)
    pm10 = [None] * n  # sensor offline for the whole period: all-null column

    return pa.table(
        {
            "station_id": pa.array(station_id, pa.string()),
            "measured_at": pa.array(measured_at, pa.timestamp("us", tz="UTC")),
            "pm25_ugm3": pa.array(pm25, pa.float64()),
            "pm10_ugm3": pa.array(pm10, pa.float64()),
            "no2_ppb": pa.array(no2, pa.int64()),
            "temperature_c": pa.array(temp, pa.float64()),
            "is_valid": pa.array(is_valid, pa.bool_()),
        }
    )


def build_city_bikes() -> pa.Table:
    rng = np.random.default_rng(20240502)
    n = 1200
    stations = [
        "Central Station", "Harbour Front", "Museum Square", "Old Town",
        "Riverside Park", "University", "Market Hall", "Tech Campus",
    ]
    weights = np.array([0.22, 0.16, 0.14, 0.12, 0.11, 0.10, 0.08, 0.07])
    start = dt.datetime(2024, 6, 1, 5, 0, 0, tzinfo=UTC)

    trip_id = list(range(100001, 100001 + n))
    start_station = [stations[i] for i in rng.choice(len(stations), n, p=weights)]
    end_station = [stations[i] for i in rng.choice(len(stations), n, p=weights)]
    offsets = np.sort(rng.integers(0, 14 * 24 * 3600, n))
    started_at = [start + dt.timedelta(seconds=int(s)) for s in offsets]
    ride_date = [t.date() for t in started_at]
    duration_s = py_ints(np.clip(rng.lognormal(6.6, 0.6, n), 60, 4 * 3600).round())
    distance_km = py_floats(np.array(duration_s) / 3600 * rng.normal(14, 3, n).clip(4), 2)
    member = [bool(x) for x in rng.random(n) < 0.64]

    start_station = with_nulls(rng, start_station, 0.03)
    end_station = with_nulls(rng, end_station, 0.06)
    duration_s = with_nulls(rng, duration_s, 0.04)
    distance_km = put_nan(with_nulls(rng, distance_km, 0.05), [3])
    member = with_nulls(rng, member, 0.02)

    return pa.table(
        {
            "trip_id": pa.array(trip_id, pa.int64()),
            "started_at": pa.array(started_at, pa.timestamp("us", tz="UTC")),
            "ride_date": pa.array(ride_date, pa.date32()),
            "start_station": pa.array(start_station, pa.string()),
            "end_station": pa.array(end_station, pa.string()),
            "duration_s": pa.array(duration_s, pa.int64()),
            "distance_km": pa.array(distance_km, pa.float64()),
            "member": pa.array(member, pa.bool_()),
        }
    )


def build_river_levels() -> pa.Table:
    rng = np.random.default_rng(20240503)
    gauges = ["Ashford Weir", "Bramley Bridge", "Coldwater Mill", "Dunmore Lock", "Elm Ford"]
    days = 100
    n = len(gauges) * days  # 500 rows
    start = dt.date(2023, 10, 1)

    gauge = [gauges[i % len(gauges)] for i in range(n)]
    reading_date = [start + dt.timedelta(days=i // len(gauges)) for i in range(n)]
    base = np.array([1.2, 2.4, 0.8, 3.1, 1.7])[np.arange(n) % len(gauges)]
    level_m = py_floats(base + np.abs(rng.normal(0, 0.35, n)), 2)
    flow = py_floats(np.array(level_m) ** 1.6 * rng.uniform(9, 13, n), 1)
    flood_warning = [lv > b + 0.6 for lv, b in zip(level_m, base)]
    battery = py_ints(rng.integers(15, 101, n))

    level_m = put_nan(with_nulls(rng, level_m, 0.04), [11, 12])
    flow = with_nulls(rng, flow, 0.10)
    battery = with_nulls(rng, battery, 0.05)

    return pa.table(
        {
            "gauge": pa.array(gauge, pa.string()),
            "reading_date": pa.array(reading_date, pa.date32()),
            "level_m": pa.array(level_m, pa.float64()),
            "flow_m3s": pa.array(flow, pa.float64()),
            "flood_warning": pa.array(flood_warning, pa.bool_()),
            "battery_pct": pa.array(battery, pa.int32()),
        }
    )


def build_bird_sightings() -> pa.Table:
    rng = np.random.default_rng(20240504)
    n = 300
    species = [
        "Eurasian Blackbird", "European Robin", "Great Tit", "Blue Tit",
        "House Sparrow", "Common Chaffinch", "Grey Heron", "Common Kingfisher",
    ]
    weights = np.array([0.2, 0.17, 0.15, 0.14, 0.13, 0.1, 0.07, 0.04])
    observers = ["obs-ana", "obs-ben", "obs-chen", "obs-dara", "obs-eli", "obs-femi"]
    start = dt.date(2024, 4, 1)

    sighting_id = list(range(1, n + 1))
    sp = [species[i] for i in rng.choice(len(species), n, p=weights)]
    observed_on = sorted(start + dt.timedelta(days=int(d)) for d in rng.integers(0, 61, n))
    bird_count = py_ints(rng.geometric(0.35, n))
    observer = [observers[i] for i in rng.integers(0, len(observers), n)]
    verified = [bool(x) for x in rng.random(n) < 0.55]
    latitude = py_floats(rng.uniform(51.30, 51.70, n), 4)
    # Ring number recorded for exactly one bird: one value, so std is null.
    ring_number = [None] * n
    ring_number[42] = 884213

    sp = with_nulls(rng, sp, 0.05)
    bird_count = with_nulls(rng, bird_count, 0.07)
    latitude = put_nan(with_nulls(rng, latitude, 0.03), [0])

    return pa.table(
        {
            "sighting_id": pa.array(sighting_id, pa.int64()),
            "observed_on": pa.array(observed_on, pa.date32()),
            "species": pa.array(sp, pa.string()),
            "bird_count": pa.array(bird_count, pa.int64()),
            "observer": pa.array(observer, pa.string()),
            "verified": pa.array(verified, pa.bool_()),
            "latitude": pa.array(latitude, pa.float64()),
            "ring_number": pa.array(ring_number, pa.int64()),
        }
    )


# --------------------------------------------------------------------------
# Catalog metadata
# --------------------------------------------------------------------------

def discussion(did: str, slug: str, title: str, dataset: str) -> dict:
    return {
        "id": did,
        "title": title,
        "slug": slug,
        "path": f"/datasets/{dataset}/discussions/{slug}",
    }


DATASETS = [
    {
        "slug": "air-quality-hourly",
        "name": "Air Quality (Hourly)",
        "description": "Hourly particulate matter, NO2 and temperature readings "
                       "from three municipal monitoring stations, March 2024.",
        "license": "CC-BY-4.0",
        "source": "https://data.example.org/environment/air-quality",
        "category": "environment",
        "tags": ["air-quality", "pm2.5", "no2", "hourly", "sensors"],
        "insights": "PM2.5 averages about 11 ug/m3 across stations; the PM10 "
                    "sensors were offline for the whole period.",
        "discussions": [
            discussion("1001", "pm10-sensor-outage", "Why is pm10_ugm3 empty?", "air-quality-hourly"),
            discussion("1002", "station-id-gaps", "Rows with a missing station_id", "air-quality-hourly"),
        ],
        "keyless_offset_hours": None,
        "build": build_air_quality,
    },
    {
        "slug": "city-bikes",
        "name": "City Bike Trips",
        "description": "Two weeks of bike-share trips with start/end stations, "
                       "duration and distance.",
        "license": "ODbL-1.0",
        "source": "Metro Bike Share Open Data",
        "category": "transport",
        "tags": ["bike-share", "mobility", "trips"],
        "insights": "Members account for roughly two thirds of trips; median "
                    "trip is about 12 minutes.",
        "discussions": [
            discussion("2001", "distance-estimates", "How is distance_km estimated?", "city-bikes"),
        ],
        "keyless_offset_hours": 168,
        "build": build_city_bikes,
    },
    {
        "slug": "river-levels",
        "name": "River Gauge Levels",
        "description": "Daily water level and flow at five river gauges, "
                       "autumn and winter 2023.",
        "license": "CC0-1.0",
        "source": "https://hydro.example.gov/gauges",
        "category": "environment",
        "tags": ["hydrology", "rivers", "flooding", "daily"],
        "insights": "Flood warnings cluster at Elm Ford and Coldwater Mill.",
        "discussions": [],
        "keyless_offset_hours": -24,
        "build": build_river_levels,
    },
    {
        "slug": "bird-sightings",
        "name": "Bird Sightings",
        "description": None,
        "license": "CC-BY-4.0",
        "source": "Regional Ornithology Society",
        "category": "biology",
        "tags": ["birds", "citizen-science", "biodiversity"],
        "insights": "Blackbirds and robins make up over a third of sightings.",
        "discussions": [
            discussion("4001", "verification-process", "How are sightings verified?", "bird-sightings"),
        ],
        "keyless_offset_hours": None,
        "build": build_bird_sightings,
    },
]


# --------------------------------------------------------------------------
# Column statistics
# --------------------------------------------------------------------------

def to_json_value(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return f if math.isfinite(f) else None
    if isinstance(v, (dt.datetime, dt.date)):  # datetime is a subclass of date
        return v.isoformat()
    if isinstance(v, str):
        return v
    raise TypeError(f"unsupported value type {type(v)!r}")


def finite_or_none(x):
    if x is None:
        return None
    f = float(x)
    return f if math.isfinite(f) else None


def column_stats(name: str, col: pa.ChunkedArray) -> dict:
    typ = col.type
    row_count = len(col)
    is_int = pa.types.is_integer(typ)
    is_float = pa.types.is_floating(typ)

    values = col.to_pylist()
    if is_float:
        # NaN (and, defensively, +/-Inf which JSON can't carry) count as null.
        valid = [v for v in values if v is not None and math.isfinite(v)]
    else:
        valid = [v for v in values if v is not None]
    null_count = row_count - len(valid)

    mean = std = vmin = vmax = median = None
    if (is_int or is_float) and valid:
        s = pd.Series(valid, dtype="int64" if is_int else "float64")
        mean = finite_or_none(s.mean())
        std = finite_or_none(s.std(ddof=1)) if len(s) >= 2 else None
        median = finite_or_none(s.median())
        if is_int:
            vmin, vmax = int(s.min()), int(s.max())
        else:
            vmin, vmax = float(s.min()), float(s.max())

    counts = Counter(valid)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]

    return {
        "name": name,
        "dtype": str(typ),
        "null_count": null_count,
        "null_percent": round(100.0 * null_count / row_count, 4) if row_count else 0.0,
        "unique_count": len(counts),
        "mean": mean,
        "std": std,
        "min": vmin,
        "max": vmax,
        "median": median,
        "top_values": [to_json_value(v) for v, _ in top],
        "sample_values": [to_json_value(v) for v in valid[:5]],
    }


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="output directory")
    args = ap.parse_args(argv)

    os.makedirs(args.out, exist_ok=True)
    entries = []
    for spec in DATASETS:
        slug = spec["slug"]
        table = spec["build"]()
        fname = f"{slug}.parquet"
        path = os.path.join(args.out, fname)
        pq.write_table(table, path, compression="snappy")

        # Read the file back so the stats describe exactly what was written.
        written = pq.read_table(path)
        entry = {k: v for k, v in spec.items() if k != "build"}
        entry.update(
            {
                "file": fname,
                "size": os.path.getsize(path),
                "sha256": sha256_of(path),
                "row_count": written.num_rows,
                "column_count": written.num_columns,
                "columns": list(written.column_names),
                "schema": [
                    column_stats(f.name, written.column(i))
                    for i, f in enumerate(written.schema)
                ],
            }
        )
        entries.append(entry)

    manifest_path = os.path.join(args.out, "manifest.json")
    text = json.dumps({"datasets": entries}, indent=2, ensure_ascii=False, allow_nan=False)
    with open(manifest_path, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    print(f"wrote {len(entries)} datasets and {manifest_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

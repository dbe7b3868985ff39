#!/usr/bin/env python3
"""Generate the showcase catalog that `dev/run` publishes beside the four test samples, so that
the web site's paging, filters, search and charts have something real to show.

Usage:
    python dev/showcase.py --out DIR

Writes DIR/<slug>.parquet and DIR/<slug>.meta.json for each dataset, and DIR/plan.tsv: one line
per publication, in order: slug, Parquet file, metadata file, end of the keyless window in hours
from now (`-` for none; negative: a window that ended). A dataset published twice (a corrected
file) has two lines; the second publication activates version 2. Two datasets are shared by
approval (`ACCESS`): their metadata files carry an `access` setting.

Deterministic: every dataset has its own random seed. Only pyarrow, numpy and the standard
library are used.
"""

import argparse
import datetime as dt
import json
import os
import sys
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

# (slug, name, category, license, tags, rows, columns, keyless hours or None, republished)
# Columns: (name, kind, argument). Kinds: id, int (low, high), normal (mean, sd), lognormal
# (mean, sigma), pct, choice [values], date (start), time (start), bool (p), text [words].
CATALOG = [
    ("household-energy-use", "Household Energy Use", "energy", "CC-BY-4.0",
     ["electricity", "households", "monthly"], 2400,
     [("household_id", "id", None), ("month", "date", "2023-01-01"), ("kwh", "lognormal", (6.0, 0.4)),
      ("tariff", "choice", ["standard", "green", "night", "dynamic"]), ("has_solar", "bool", 0.18)],
     None, False),
    ("solar-farm-output", "Solar Farm Output (15 min)", "energy", "CC0-1.0",
     ["solar", "renewables", "generation"], 4000,
     [("measured_at", "time", "2024-06-01T00:00:00"), ("farm", "choice", ["North Ridge", "Salt Flats", "Lakeside"]),
      ("output_mw", "normal", (42.0, 18.0)), ("irradiance_wm2", "normal", (610.0, 220.0)), ("curtailed", "bool", 0.04)],
     72, True),
    ("wind-turbine-telemetry", "Wind Turbine Telemetry", "energy", "ODbL-1.0",
     ["wind", "renewables", "sensors"], 3000,
     [("turbine_id", "int", (1, 40)), ("measured_at", "time", "2024-02-01T00:00:00"),
      ("wind_speed_ms", "lognormal", (2.0, 0.35)), ("rotor_rpm", "normal", (14.0, 3.0)), ("fault_code", "choice", ["none", "none", "none", "E12", "E31"])],
     None, False),
    ("grid-carbon-intensity", "Grid Carbon Intensity", "energy", "CC-BY-4.0",
     ["electricity", "emissions", "hourly"], 2200,
     [("hour", "time", "2024-01-01T00:00:00"), ("region", "choice", ["north", "south", "east", "west"]),
      ("gco2_per_kwh", "normal", (210.0, 60.0)), ("renewable_share_pct", "pct", None)],
     None, False),
    ("hospital-waiting-times", "Hospital Waiting Times", "health", "OGL-UK-3.0",
     ["hospitals", "waiting-lists", "monthly"], 1800,
     [("trust", "choice", ["Riverside", "Hillcrest", "St Anne's", "Northgate", "Elm Park"]),
      ("month", "date", "2022-04-01"), ("specialty", "choice", ["cardiology", "orthopaedics", "dermatology", "ENT"]),
      ("median_wait_weeks", "lognormal", (2.3, 0.5)), ("patients_waiting", "int", (50, 9000))],
     None, True),
    ("vaccination-coverage", "Childhood Vaccination Coverage", "health", "CC-BY-4.0",
     ["vaccines", "children", "public-health"], 900,
     [("district", "text", ["Ashby", "Brook", "Carrow", "Dunmore", "Eastwick", "Fenwick"]),
      ("year", "int", (2010, 2024)), ("vaccine", "choice", ["MMR1", "MMR2", "DTaP", "HepB"]), ("coverage_pct", "pct", None)],
     240, False),
    ("clinical-trial-registry", "Clinical Trial Registry (extract)", "health", "CC0-1.0",
     ["clinical-trials", "registry"], 1200,
     [("trial_id", "id", None), ("phase", "choice", ["I", "II", "III", "IV"]), ("start_date", "date", "2015-01-01"),
      ("enrolment", "lognormal", (5.0, 1.1)), ("has_results", "bool", 0.35)],
     None, False),
    ("air-pollen-counts", "Daily Pollen Counts", "health", "CC-BY-4.0",
     ["pollen", "allergies", "daily"], 730,
     [("day", "date", "2023-01-01"), ("grass", "lognormal", (2.5, 1.2)), ("birch", "lognormal", (1.5, 1.5)),
      ("ragweed", "lognormal", (0.8, 1.3)), ("station", "choice", ["city centre", "airport"])],
     None, False),
    ("bus-punctuality", "Bus Punctuality by Route", "transport", "OGL-UK-3.0",
     ["buses", "punctuality", "public-transport"], 3500,
     [("route", "choice", ["1", "4", "7A", "12", "15", "22", "X5"]), ("scheduled_at", "time", "2024-03-04T05:00:00"),
      ("delay_s", "normal", (95.0, 140.0)), ("cancelled", "bool", 0.02)],
     12, False),
    ("road-traffic-counts", "Road Traffic Counts", "transport", "CC-BY-4.0",
     ["traffic", "roads", "counts"], 2600,
     [("counter_id", "int", (100, 180)), ("hour", "time", "2024-05-01T00:00:00"),
      ("cars", "int", (0, 2400)), ("lorries", "int", (0, 300)), ("cycles", "int", (0, 220))],
     None, True),
    ("ev-charging-sessions", "EV Charging Sessions", "transport", "ODbL-1.0",
     ["electric-vehicles", "charging", "energy"], 2000,
     [("charger_id", "id", None), ("started_at", "time", "2024-04-01T00:00:00"),
      ("energy_kwh", "lognormal", (2.8, 0.6)), ("duration_min", "lognormal", (3.9, 0.5)),
      ("connector", "choice", ["CCS", "CHAdeMO", "Type 2"])],
     None, False),
    ("airport-passengers", "Airport Passengers by Month", "transport", "CC0-1.0",
     ["aviation", "passengers", "monthly"], 480,
     [("airport", "choice", ["LHR", "MAN", "EDI", "BRS", "BHX"]), ("month", "date", "2016-01-01"),
      ("passengers", "lognormal", (13.5, 0.5)), ("domestic_share_pct", "pct", None)],
     None, False),
    ("butterfly-transects", "Butterfly Transect Counts", "biology", "CC-BY-4.0",
     ["butterflies", "citizen-science", "biodiversity"], 1600,
     [("site", "text", ["Ashwood", "Bramble Hill", "Cotton Meadow", "Dell End"]), ("week", "date", "2023-04-01"),
      ("species", "choice", ["Peacock", "Red Admiral", "Small White", "Meadow Brown", "Ringlet", "Gatekeeper"]),
      ("count", "int", (0, 60))],
     168, False),
    ("tree-inventory", "Street Tree Inventory", "biology", "ODbL-1.0",
     ["trees", "urban", "inventory"], 2500,
     [("tree_id", "id", None), ("species", "choice", ["London plane", "Lime", "Cherry", "Birch", "Oak", "Rowan"]),
      ("height_m", "lognormal", (2.2, 0.4)), ("trunk_cm", "lognormal", (3.5, 0.45)), ("planted", "date", "1950-01-01")],
     None, False),
    ("fish-stock-survey", "Coastal Fish Stock Survey", "biology", "CC-BY-SA-4.0",
     ["fisheries", "marine", "survey"], 1100,
     [("haul_id", "id", None), ("species", "choice", ["cod", "haddock", "whiting", "plaice", "sole"]),
      ("length_cm", "normal", (34.0, 9.0)), ("weight_g", "lognormal", (6.2, 0.7)), ("caught_at", "time", "2023-09-01T00:00:00")],
     None, False),
    ("soil-moisture-network", "Soil Moisture Network", "agriculture", "CC0-1.0",
     ["soil", "sensors", "farming"], 3000,
     [("probe", "int", (1, 60)), ("measured_at", "time", "2024-07-01T00:00:00"),
      ("moisture_pct", "pct", None), ("soil_temp_c", "normal", (16.0, 4.0))],
     None, False),
    ("crop-yields", "Crop Yields by County", "agriculture", "OGL-UK-3.0",
     ["crops", "yields", "annual"], 700,
     [("county", "text", ["Ashfordshire", "Bellmoor", "Corrin", "Dalby", "Eskdale"]),
      ("year", "int", (2000, 2024)), ("crop", "choice", ["wheat", "barley", "oilseed rape", "oats"]),
      ("yield_t_ha", "normal", (7.2, 1.3))],
     None, True),
    ("milk-prices", "Farmgate Milk Prices", "agriculture", "CC-BY-4.0",
     ["dairy", "prices", "monthly"], 360,
     [("month", "date", "1996-01-01"), ("pence_per_litre", "normal", (28.0, 6.0)),
      ("buyer_type", "choice", ["cooperative", "processor", "retailer-aligned"])],
     None, False),
    ("house-prices", "House Price Transactions", "economics", "OGL-UK-3.0",
     ["housing", "prices", "transactions"], 5000,
     [("sold_on", "date", "2023-01-01"), ("price_gbp", "lognormal", (12.6, 0.5)),
      ("property_type", "choice", ["detached", "semi", "terraced", "flat"]), ("new_build", "bool", 0.09),
      ("postcode_area", "text", ["AB", "BS", "CF", "DE", "EH", "LS", "M", "NE"])],
     None, False),
    ("consumer-price-index", "Consumer Price Index", "economics", "CC0-1.0",
     ["inflation", "prices", "monthly"], 420,
     [("month", "date", "1990-01-01"), ("index", "normal", (100.0, 15.0)), ("annual_rate_pct", "normal", (2.6, 1.8))],
     None, False),
    ("small-business-survey", "Small Business Survey", "economics", "CC-BY-4.0",
     ["business", "survey", "employment"], 1500,
     [("respondent", "id", None), ("sector", "choice", ["retail", "construction", "hospitality", "manufacturing", "services"]),
      ("employees", "int", (1, 249)), ("turnover_k", "lognormal", (6.0, 1.0)), ("exporter", "bool", 0.22)],
     48, False),
    ("school-attendance", "School Attendance", "education", "OGL-UK-3.0",
     ["schools", "attendance", "weekly"], 2000,
     [("school_id", "int", (1000, 1400)), ("week", "date", "2023-09-04"),
      ("attendance_pct", "pct", None), ("phase", "choice", ["primary", "secondary", "special"])],
     None, False),
    ("library-loans", "Public Library Loans", "education", "CC-BY-4.0",
     ["libraries", "books", "loans"], 2800,
     [("branch", "choice", ["Central", "Westside", "Harbour", "Oakfield"]), ("loaned_on", "date", "2024-01-01"),
      ("format", "choice", ["book", "ebook", "audiobook", "dvd"]), ("loan_days", "int", (1, 42))],
     720, False),
    ("museum-collection", "Museum Collection Records", "culture", "CC0-1.0",
     ["museums", "collections", "heritage"], 1400,
     [("object_id", "id", None), ("department", "choice", ["Ceramics", "Textiles", "Coins", "Prints", "Natural history"]),
      ("acquired", "date", "1880-01-01"), ("on_display", "bool", 0.12), ("title", "text", ["jug", "sampler", "penny", "etching", "fossil", "bowl"]),
      # A name with spaces, and one long unbroken word (in the description too): the site's
      # ids and its layout on a phone are tested on them.
      ("Gallery name", "choice", ["East Wing", "Long Gallery", "Print Room"]),
      ("accession_number_in_the_collections_management_system", "id", None)],
     None, False),
    ("festival-attendance", "Festival Attendance", "culture", "CC-BY-SA-4.0",
     ["events", "tourism", "daily"], 600,
     [("festival", "choice", ["Jazz by the Sea", "Book Week", "Lantern Parade", "Folk Weekend"]),
      ("day", "date", "2019-06-01"), ("visitors", "lognormal", (8.0, 0.6)), ("rain_mm", "lognormal", (0.3, 1.2))],
     None, False),
    ("weather-stations", "Weather Station Observations", "environment", "CC-BY-4.0",
     ["weather", "temperature", "hourly"], 4500,
     [("station", "choice", ["Hilltop", "Harbour", "Airfield", "Valley"]), ("observed_at", "time", "2024-01-01T00:00:00"),
      ("temp_c", "normal", (9.5, 5.5)), ("pressure_hpa", "normal", (1012.0, 9.0)), ("wind_kt", "lognormal", (2.0, 0.5))],
     36, True),
    ("coastal-water-quality", "Coastal Bathing Water Quality", "environment", "OGL-UK-3.0",
     ["water-quality", "beaches", "bacteria"], 900,
     [("beach", "text", ["North Bay", "Sandy Cove", "Pier Beach", "Gull Point"]), ("sampled_on", "date", "2023-05-01"),
      ("e_coli_cfu", "lognormal", (3.5, 1.4)), ("classification", "choice", ["excellent", "good", "sufficient", "poor"])],
     None, False),
    ("recycling-rates", "Household Recycling Rates", "environment", "ODbL-1.0",
     ["waste", "recycling", "councils"], 640,
     [("council", "text", ["Abbeyvale", "Burnside", "Crosshaven", "Dovercourt"]), ("quarter", "date", "2015-01-01"),
      ("recycled_pct", "pct", None), ("tonnes_collected", "lognormal", (9.0, 0.4))],
     None, False),
]


def column(rng, kind, arg, n, version):
    if kind == "id":
        return pa.array(np.arange(1, n + 1) * 7 + 1000, pa.int64())
    if kind == "int":
        low, high = arg
        return pa.array(rng.integers(low, high + 1, n), pa.int64())
    if kind == "normal":
        mean, sd = arg
        values = np.round(rng.normal(mean + version * 0.5, sd, n), 2)
        return pa.array(values, pa.float64(), mask=rng.random(n) < 0.02)
    if kind == "lognormal":
        mean, sigma = arg
        return pa.array(np.round(rng.lognormal(mean, sigma, n), 2), pa.float64(), mask=rng.random(n) < 0.02)
    if kind == "pct":
        return pa.array(np.round(np.clip(rng.beta(8, 2, n) * 100, 0, 100), 1), pa.float64())
    if kind in ("choice", "text"):
        weights = np.linspace(1.0, 0.3, len(arg))
        picked = rng.choice(arg, n, p=weights / weights.sum())
        return pa.array(picked.tolist(), pa.string(), mask=rng.random(n) < (0.01 if kind == "choice" else 0.05))
    if kind == "date":
        start = dt.date.fromisoformat(arg)
        days = np.sort(rng.integers(0, 365 * 2, n))
        return pa.array([start + dt.timedelta(days=int(d)) for d in days], pa.date32())
    if kind == "time":
        start = dt.datetime.fromisoformat(arg).replace(tzinfo=dt.timezone.utc)
        minutes = np.sort(rng.integers(0, 60 * 24 * 60, n))
        return pa.array([start + dt.timedelta(minutes=int(m)) for m in minutes], pa.timestamp("us", tz="UTC"))
    if kind == "bool":
        return pa.array((rng.random(n) < arg).tolist(), pa.bool_(), mask=rng.random(n) < 0.01)
    raise ValueError(kind)


# Datasets shared by approval (any other is `registered`: any read key): the `access` setting of
# their metadata file, as an operator would write it.
ACCESS = {
    "clinical-trial-registry": {
        "level": "approval",
        "approval": "manual",
        "form": [
            {"name": "affiliation", "label": "Your organisation", "max_length": 200},
            {"name": "purpose", "label": "What will you use the data for?", "max_length": 1000},
        ],
        "terms": "For research use only. Do not attempt to re-identify trial sites or participants.",
    },
    "small-business-survey": {
        "level": "approval",
        "approval": "automatic",
        "form": [{"name": "purpose", "label": "What will you use the data for?", "max_length": 500,
                  "required": False}],
        "terms": None,
    },
}


def metadata(slug, name, category, license_, tags, columns, version):
    described = ", ".join(c[0] for c in columns)
    meta = {
        "name": name,
        "description": f"{name}: {described}." + (" Corrected re-publication." if version > 1 else ""),
        "license": license_,
        "source": f"https://open.example.org/{category}/{slug}",
        "category": category,
        "tags": tags,
        "insights": f"Synthetic showcase data for the catalog web site ({len(columns)} columns).",
        "discussions": [
            {"id": f"{zlib.crc32(slug.encode()) % 9000 + 1000}", "title": f"Questions about {name}",
             "slug": "questions", "path": f"/datasets/{slug}/discussions/questions"},
        ] if len(tags) > 2 else [],
    }
    if slug in ACCESS:
        meta["access"] = ACCESS[slug]
    return meta


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="output directory")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    plan = []
    for seed, (slug, name, category, license_, tags, rows, columns, keyless, republished) in enumerate(CATALOG):
        for version in (1, 2) if republished else (1,):
            rng = np.random.default_rng(1000 + seed * 10 + version)
            n = rows + (version - 1) * rows // 10
            table = pa.table({c: column(rng, kind, arg, n, version) for c, kind, arg in columns})
            stem = f"{slug}-v{version}"
            pq.write_table(table, os.path.join(args.out, f"{stem}.parquet"), compression="zstd")
            with open(os.path.join(args.out, f"{stem}.meta.json"), "w", encoding="utf-8") as f:
                json.dump(metadata(slug, name, category, license_, tags, columns, version), f)
            until = "-" if keyless is None else str(keyless)
            plan.append(f"{slug}\t{stem}.parquet\t{stem}.meta.json\t{until}")
    with open(os.path.join(args.out, "plan.tsv"), "w", encoding="utf-8") as f:
        f.write("\n".join(plan) + "\n")
    print(f"wrote {len(CATALOG)} datasets ({len(plan)} publications) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

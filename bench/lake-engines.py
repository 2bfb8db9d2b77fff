# Reads the label columns of every `values` file of LAKE_B with pyarrow, DuckDB, polars and
# Spark, and compares each engine's per-(channel, entity, key) row count and frame sum with
# pyarrow's of the same file in LAKE_A (docs/performance.md, "Lake, eighth pass"): a check
# that every engine decodes simrec's label pages as pyarrow decodes those before a change.
# Needs pyspark (Java 17) beside pyarrow, duckdb and polars, e.g. target/venv-lake.
# Usage: python3 bench/lake-engines.py LAKE_A LAKE_B
import sys
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

LABELS = ["channel", "entity", "key"]
QUERY = "select channel, entity, key, count(frame), sum(frame) from {} group by 1, 2, 3"


def norm(rows):
    return sorted((c, e, k, int(n), int(s or 0)) for c, e, k, n, s in rows)


def by_pyarrow(path):
    t = pq.read_table(path, columns=LABELS + ["frame"])
    g = t.group_by(LABELS).aggregate([("frame", "count"), ("frame", "sum")])
    return norm(tuple(r.values()) for r in g.to_pylist())


a, b = Path(sys.argv[1]), Path(sys.argv[2])
spark = SparkSession.builder.master("local[2]").getOrCreate()
bad = 0
for fa in sorted((a / "values").glob("*.parquet")):
    want = by_pyarrow(fa)
    fb = b / "values" / fa.name
    spark.read.parquet(str(fb)).createOrReplaceTempView("v")
    got = {
        "pyarrow": by_pyarrow(fb),
        "duckdb": norm(duckdb.sql(QUERY.format(f"read_parquet('{fb}')")).fetchall()),
        "polars": norm(
            pl.scan_parquet(fb)
            .group_by(LABELS)
            .agg(pl.col("frame").count(), pl.col("frame").sum().alias("sum"))
            .collect()
            .rows()
        ),
        "spark": norm(tuple(r) for r in spark.sql(QUERY.format("v")).collect()),
    }
    for engine, rows in got.items():
        same = rows == want
        bad += not same
        print(f"values/{fa.name} {engine}: {len(rows)} groups, {'same' if same else 'DIFFERENT'}")
sys.exit(1 if bad else 0)

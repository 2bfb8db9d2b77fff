"""The docs/analysis.md example: a directory of recordings converted with
`simrec convert --each … --to parquet`, queried with DuckDB and pandas.

Usage: python scripts/analysis_example.py TABLES_DIR
(needs duckdb, pandas and pyarrow; scripts/analysis_example.sh makes a venv with them
under target/ and runs this on the fixtures.)
"""

import sys

import duckdb
import pandas as pd
import pyarrow.parquet as pq

tables = sys.argv[1]

print("-- DuckDB: records per file and channel")
print(
    duckdb.sql(
        f"""
        SELECT regexp_extract(filename, '[^/]+$') AS file, channel, count(*) AS records,
               min(time_ns) AS first_ns, max(time_ns) AS last_ns
        FROM read_parquet('{tables}/*.parquet', filename = true, union_by_name = true)
        GROUP BY ALL ORDER BY file, channel
        """
    ).df().to_string(index=False)
)

print()
print("-- DuckDB: NanoVer temperature per second of the run")
print(
    duckdb.sql(
        f"""
        SELECT floor(time_ns / 1e9) AS second, round(avg("system.temperature"), 3) AS mean_K,
               count(*) AS frames
        FROM read_parquet('{tables}/small.traj.parquet')
        WHERE channel = 'frame' AND "system.temperature" IS NOT NULL
        GROUP BY ALL ORDER BY second
        """
    ).df().to_string(index=False)
)

print()
print("-- pandas: Elodin body positions (world_pos is 7 float64: quaternion xyzw, then xyz)")
table = pq.read_table(f"{tables}/ball_1200.parquet")
print("world_pos shape:", table.schema.field("world_pos").metadata[b"simrec.shape"].decode())
df = table.to_pandas()
body = df[df.channel == "body"][["time_ns", "entity", "world_pos"]]
body = body.assign(z=body.world_pos.map(lambda p: p[6])).drop(columns="world_pos")
print(body.groupby("entity").z.agg(["count", "min", "max"]).round(6).to_string())

print()
print("-- pandas: the file's key-value metadata")
meta = pq.read_metadata(f"{tables}/small.traj.parquet").metadata
for key in sorted(k for k in meta if k.startswith(b"simrec.")):
    print(f"{key.decode()}: {meta[key].decode()!r}")

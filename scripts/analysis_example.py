"""The queries of docs/analysis.md, on a lake (argument: its directory), in DuckDB, pandas
and, when pyspark is importable, the same queries in Spark SQL."""
import sys

import duckdb
import pandas as pd

lake = sys.argv[1]
values = f"read_parquet('{lake}/values/*.parquet')"
poses = f"read_parquet('{lake}/poses/*.parquet')"

# Each query once, with {values} and {poses} standing for the tables: DuckDB reads the
# files, Spark its views of the folders.
QUERIES = {
    "mean kinetic energy per second across NanoVer recordings": """
        SELECT recording, floor(time_ns / 1e9) AS second,
               round(avg(value), 1) AS mean_kinetic_kJ_per_mol, count(*) AS frames
        FROM {values} WHERE format LIKE 'nanover%' AND key = 'energy.kinetic'
        GROUP BY recording, floor(time_ns / 1e9) ORDER BY recording, second""",
    "particle 3's trajectory (metres), first frames": """
        SELECT time_ns, frame, x, y, z FROM {poses}
        WHERE recording = 'small.nanover.zip' AND entity = '3'
        ORDER BY time_ns LIMIT 5""",
    "an Icarus signal against absolute time": """
        SELECT time_utc, channel, value FROM {values}
        WHERE recording = 'a2.icarec.tar' AND channel = 'Vehicle.Aero.alpha'
        ORDER BY time_utc""",
    "3es shapes and XREC objects on one time axis (seconds from each start)": """
        SELECT round(time_ns / 1e9, 3) AS t, format, entity, x, y, z, qw FROM {poses}
        WHERE format IN ('3es', 'xrec') AND time_ns BETWEEN 500000000 AND 1000000000
        ORDER BY t, format, entity LIMIT 12""",
}

pd.set_option("display.width", 140)
for title, sql in QUERIES.items():
    print(f"-- DuckDB: {title}")
    print(duckdb.sql(sql.format(values=values, poses=poses)).df().to_string(index=False))
    print()

print("-- pandas: the whole values table, and one file's metadata")
df = pd.read_parquet(f"{lake}/values")
print(df.groupby("format").size().to_string())
meta = __import__("pyarrow.parquet").parquet.read_schema(f"{lake}/values/session.xrec.parquet").metadata
for key in sorted(meta):
    if key.startswith(b"simrec.") and key != b"simrec.source.metadata":
        print(f"{key.decode()}: {meta[key].decode()!r}")
print()

try:
    from pyspark.sql import SparkSession
except ImportError:
    print("-- Spark: SKIPPED (pyspark is not importable)")
    sys.exit(0)
spark = (SparkSession.builder.master("local[1]").appName("simrec-lake")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.session.timeZone", "UTC").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
spark.read.parquet(f"{lake}/values").createOrReplaceTempView("lake_values")
spark.read.parquet(f"{lake}/poses").createOrReplaceTempView("lake_poses")
for title, sql in QUERIES.items():
    print(f"-- Spark SQL: {title}")
    print(spark.sql(sql.format(values="lake_values", poses="lake_poses")).toPandas().to_string(index=False))
    print()
spark.stop()

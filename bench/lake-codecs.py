# The float columns of a NanoVer lake under each Parquet compression and encoding
# (docs/performance.md, "Lake, sixth pass"): the `values` table's `values` list (NanoVer's
# `particle.positions`, float32 widened to float64) and `poses`' x/y/z (nanometres scaled to
# metres). Per option: the file's size, the CPU seconds pyarrow (Arrow C++, one thread) takes
# to write it, and whether pandas, pyarrow, polars, DuckDB and Spark (when pyspark imports)
# read it back to the same sum. The CPU figures are Arrow C++'s, not simrec's (the `parquet`
# crate's zstd is the same C library; its LZ4 and Snappy are Rust ports): they rank the options,
# simrec's own are measured by converting with it.
# Usage: python bench/lake-codecs.py LAKE OUT_DIR   (LAKE: a lake holding one NanoVer recording)
import glob
import os
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

lake, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
values = pq.read_table(glob.glob(f"{lake}/values/*.parquet")[0], columns=["values"])
poses = pq.read_table(glob.glob(f"{lake}/poses/*.parquet")[0], columns=["x", "y", "z"])
tables = {"values list": values, "poses x/y/z": poses}

# name: (compression, byte stream split)
options = {
    "zstd 1": ("zstd", False),
    "BSS + zstd 1": ("zstd", True),
    "LZ4_RAW": ("lz4", False),
    "BSS + LZ4_RAW": ("lz4", True),
    "SNAPPY": ("snappy", False),
    "none": ("none", False),
    "BSS, none": ("none", True),
}


def total(table):
    s = 0.0
    for name in table.column_names:
        col = table[name]
        if pa.types.is_list(col.type):
            col = pc.list_flatten(col)
        s += pc.sum(col).as_py() or 0.0
    return s


def sql_sum(names, flatten):
    if flatten:
        return "sum(v)", f"(SELECT unnest({names[0]}) AS v FROM {{src}})"
    return " + ".join(f"sum({n})" for n in names), "{src}"


readers = {}
import pandas as pd  # noqa: E402
import polars as pl  # noqa: E402
import duckdb  # noqa: E402


def pandas_sum(path, names, flatten):
    df = pd.read_parquet(path)
    if flatten:
        return float(sum(float(x.sum()) for x in df[names[0]] if x is not None))
    return float(sum(df[n].sum() for n in names))


def polars_sum(path, names, flatten):
    df = pl.read_parquet(path)
    if flatten:
        return float(df[names[0]].explode().sum())
    return float(sum(df[n].sum() for n in names))


def duckdb_sum(path, names, flatten):
    expr, src = sql_sum(names, flatten)
    return float(duckdb.execute(f"SELECT {expr} FROM {src.format(src=f'read_parquet({path!r})')}").fetchone()[0])


readers = {
    "pyarrow": lambda p, n, f: total(pq.read_table(p)),
    "pandas": pandas_sum,
    "polars": polars_sum,
    "duckdb": duckdb_sum,
}
try:
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("lake-codecs")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "2g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")

    def spark_sum(path, names, flatten):
        spark.read.parquet(path).createOrReplaceTempView("t")
        expr, src = sql_sum(names, flatten)
        src = src.format(src="t").replace("unnest(", "explode(")
        return float(spark.sql(f"SELECT {expr} FROM {src}").collect()[0][0])

    readers["spark"] = spark_sum
except ImportError:
    spark = None
    print("spark: SKIPPED (pyspark is not importable)")

print(f"{'column':12} {'option':14} {'MB':>8} {'CPU s':>6}  readers")
for label, table in tables.items():
    want = total(table)
    names = table.column_names
    flatten = pa.types.is_list(table[names[0]].type)
    for option, (codec, bss) in options.items():
        path = os.path.join(out, f"{label.split()[0]}-{option.replace(' ', '').replace(',', '').replace('+', '_')}.parquet")
        start = time.process_time()
        pq.write_table(table, path, compression=codec, use_dictionary=False,
                       use_byte_stream_split=bss, data_page_size=256 << 10,
                       row_group_size=1 << 20)
        cpu = time.process_time() - start
        verdicts = []
        for name, read in readers.items():
            try:
                got = read(path, names, flatten)
                ok = abs(got - want) <= 1e-9 * max(1.0, abs(want))
                verdicts.append(f"{name} {'ok' if ok else f'WRONG ({got} != {want})'}")
            except Exception as e:  # a reader that refuses the file is the finding
                verdicts.append(f"{name} FAILS ({type(e).__name__}: {str(e)[:80]})")
        size = os.path.getsize(path) / 1e6
        print(f"{label:12} {option:14} {size:8.1f} {cpu:6.2f}  {', '.join(verdicts)}", flush=True)
        os.remove(path)
if spark is not None:
    spark.stop()

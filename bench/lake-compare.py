# Compares two lakes row for row (bench/lake.sh's before/after check, docs/performance.md
# "Lake"): every table of LAKE_A is in LAKE_B with the same schema and the same rows in the
# same order. Usage: python3 bench/lake-compare.py LAKE_A LAKE_B
import sys
from pathlib import Path

import pyarrow.parquet as pq

a, b = Path(sys.argv[1]), Path(sys.argv[2])
bad = 0
for table in ("values", "poses"):
    for fa in sorted((a / table).glob("*.parquet")):
        fb = b / table / fa.name
        ta, tb = pq.read_table(fa), pq.read_table(fb)
        same = ta.schema.remove_metadata() == tb.schema.remove_metadata() and ta.equals(tb)
        print(f"{table}/{fa.name}: {ta.num_rows} / {tb.num_rows} rows, {'same' if same else 'DIFFERENT'}")
        bad += not same
sys.exit(1 if bad else 0)

//! Helpers for the Elodin tests: fixture paths, Parquet files read whole with the parquet
//! crate (independently of simrec's reader), and hand-built archetype files.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{Array as _, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;

pub fn elodin_fixture(name: &str) -> PathBuf {
    super::any_fixture("elodin").join(name)
}

/// The probe's components of `elodin-db/types_v0180` converted into `dir/probe/`: a DB of
/// one time grid of every type (u8 to f64, bool, a 3×3 matrix), scalars among them.
pub fn probe_db(dir: &Path) -> PathBuf {
    let db = dir.join("probe/");
    let types = super::any_fixture("elodin-db/types_v0180");
    let args = [
        "convert",
        super::s(&types),
        "-o",
        super::s(&db),
        "--channel",
        "probe.*",
    ];
    let made = super::run_in(dir, &args);
    assert_eq!(made.code, 0, "{}", made.stderr);
    db
}

/// A Parquet file read whole: its Arrow schema, key-value keys and one batch.
pub struct Table {
    pub schema: Arc<Schema>,
    pub kv_keys: Vec<String>,
    pub batch: RecordBatch,
}

impl Table {
    pub fn column(&self, name: &str) -> ArrayRef {
        let i = self
            .schema
            .index_of(name)
            .unwrap_or_else(|_| panic!("no column {name}"));
        self.batch.column(i).clone()
    }

    pub fn rows(&self) -> usize {
        self.batch.num_rows()
    }

    pub fn u64s(&self, name: &str) -> Vec<u64> {
        let c = self.column(name);
        let a = c
            .as_any()
            .downcast_ref::<arrow_array::UInt64Array>()
            .unwrap();
        a.values().to_vec()
    }

    /// Column names in file order.
    pub fn names(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    pub fn types(&self) -> BTreeMap<String, DataType> {
        self.schema
            .fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().clone()))
            .collect()
    }
}

pub fn read_table(path: &Path) -> Table {
    let file = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let kv_keys = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kv| kv.iter().map(|k| k.key.clone()).collect())
        .unwrap_or_default();
    let schema = builder.schema().clone();
    let mut reader = builder.with_batch_size(1 << 22).build().unwrap();
    let batch = reader
        .next()
        .map(|b| b.unwrap())
        .unwrap_or_else(|| RecordBatch::new_empty(schema.clone()));
    assert!(reader.next().is_none(), "one batch expected");
    Table {
        schema,
        kv_keys,
        batch,
    }
}

/// Writes a Parquet file from named columns (nullable fields), the way a damaged or
/// hand-made archetype file would look.
pub fn write_table(path: &Path, columns: Vec<(&str, ArrayRef)>) {
    let fields: Vec<arrow_schema::Field> = columns
        .iter()
        .map(|(n, a)| arrow_schema::Field::new(*n, a.data_type().clone(), true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(
        schema.clone(),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap();
    let mut w = ArrowWriter::try_new(File::create(path).unwrap(), schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// Asserts two Parquet files of one archetype hold the same columns with the same values
/// (column order aside; element types compared exactly).
#[track_caller]
pub fn assert_same_table(got: &Table, want: &Table) {
    assert_eq!(got.rows(), want.rows(), "rows");
    let mut g = got.names();
    let mut w = want.names();
    g.sort();
    w.sort();
    assert_eq!(g, w, "columns");
    for name in &w {
        let (a, b) = (got.column(name), want.column(name));
        assert_eq!(a.data_type(), b.data_type(), "type of {name}");
        assert_eq!(a.to_data(), b.to_data(), "values of {name}");
    }
}

//! One export file as columns in memory: its times (ns since the Unix epoch) and its other
//! columns, each a flat typed vector with the elements per row and which rows hold a value
//! (a `--join`ed file fills the rows a member lacks with nulls). Parquet and Arrow IPC go
//! through arrow-rs; CSV is `csv_table.rs`.

use std::path::Path;

use arrow_array::types::*;
use arrow_array::{
    Array as _, ArrayRef, BooleanArray, FixedSizeListArray, PrimitiveArray, RecordBatch,
};
use arrow_schema::{DataType, TimeUnit};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::model::ArrayData;

/// The file kinds `elodin-db export` writes, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Parquet,
    Arrow,
    Csv,
}

impl Kind {
    pub fn of(name: &str) -> Option<Kind> {
        let (stem, ext) = name.rsplit_once('.')?;
        // Hidden files (`.x.csv`) are not Elodin's.
        if stem.is_empty() || stem.starts_with('.') {
            return None;
        }
        match ext {
            "parquet" => Some(Kind::Parquet),
            "arrow" => Some(Kind::Arrow),
            "csv" => Some(Kind::Csv),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Parquet => "parquet",
            Kind::Arrow => "arrow-ipc",
            Kind::Csv => "csv",
        }
    }
}

/// The names `elodin-db export` gives its time column: `time` (a timestamp, µs), and with
/// `--mono-us` / `--mono-ns` the integers `time_us` / `time_ns`.
pub const TIME_NAMES: [&str; 3] = ["time", "time_ns", "time_us"];

/// A column of values.
#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    /// `rows × width` elements (a row without a value holds placeholders).
    pub data: ArrayData,
    pub width: usize,
    /// Each row's elements were one list cell (not a flattened element column).
    pub list: bool,
    pub valid: Vec<bool>,
}

#[derive(Debug, Clone, Default)]
pub struct Table {
    /// ns since the Unix epoch, one per row.
    pub times: Vec<i64>,
    /// The time column counted ns (`--mono-ns`): 9 significant fraction digits, else 6.
    pub nanos: bool,
    pub columns: Vec<Column>,
}

/// Why a file does not read as an export table.
pub type Problem = String;

pub fn read(path: &Path, kind: Kind) -> Result<Table, Problem> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    decode(bytes, kind)
}

/// A whole file's bytes as a table (the whole file is needed anyway: Parquet and Arrow IPC
/// keep their footer at the end).
pub fn decode(bytes: Vec<u8>, kind: Kind) -> Result<Table, Problem> {
    let batches: Vec<RecordBatch> = match kind {
        Kind::Csv => return super::csv_table::decode(&bytes),
        Kind::Parquet => ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))
            .and_then(|b| b.build())
            .map_err(|e| e.to_string())?
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?,
        Kind::Arrow => arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None)
            .map_err(|e| e.to_string())?
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?,
    };
    from_batches(&batches)
}

/// The table of a file's record batches (one, from Elodin; any number read the same).
pub fn from_batches(batches: &[RecordBatch]) -> Result<Table, Problem> {
    let mut table = Table::default();
    for (b, batch) in batches.iter().enumerate() {
        let schema = batch.schema();
        let Some(time_name) = schema.fields().first().map(|f| f.name().as_str()) else {
            return Err("no columns".into());
        };
        let (times, nanos) = times(time_name, batch.column(0))?;
        if b == 0 {
            table.nanos = nanos;
            for field in schema.fields().iter().skip(1) {
                table.columns.push(Column {
                    name: field.name().clone(),
                    data: ArrayData::Bool(Vec::new()),
                    width: 0,
                    list: false,
                    valid: Vec::new(),
                });
            }
        } else if schema.fields().len() != table.columns.len() + 1 {
            return Err(format!("record batch {b} has other columns than the first"));
        }
        table.times.extend(times);
        for (i, column) in table.columns.iter_mut().enumerate() {
            append(column, batch.column(i + 1), b == 0)?;
        }
    }
    Ok(table)
}

/// A time column's values in ns, and whether it counted ns.
fn times(name: &str, column: &ArrayRef) -> Result<(Vec<i64>, bool), Problem> {
    if column.null_count() > 0 {
        return Err(format!("time column `{name}` has nulls"));
    }
    macro_rules! raw {
        ($t:ty) => {
            column
                .as_any()
                .downcast_ref::<PrimitiveArray<$t>>()
                .map(|a| a.values().to_vec())
        };
    }
    let (values, scale, nanos) = match (column.data_type(), name) {
        (DataType::Timestamp(TimeUnit::Second, _), _) => {
            (raw!(TimestampSecondType), 1_000_000_000, false)
        }
        (DataType::Timestamp(TimeUnit::Millisecond, _), _) => {
            (raw!(TimestampMillisecondType), 1_000_000, false)
        }
        (DataType::Timestamp(TimeUnit::Microsecond, _), _) => {
            (raw!(TimestampMicrosecondType), 1_000, false)
        }
        (DataType::Timestamp(TimeUnit::Nanosecond, _), _) => {
            (raw!(TimestampNanosecondType), 1, true)
        }
        (DataType::Int64, "time_ns") => (raw!(Int64Type), 1, true),
        (DataType::Int64, "time_us") => (raw!(Int64Type), 1_000, false),
        (dt, _) => return Err(format!("the first column `{name}` ({dt}) is not a time")),
    };
    let values = values.ok_or_else(|| format!("time column `{name}` does not decode"))?;
    values
        .into_iter()
        .map(|t| t.checked_mul(scale))
        .collect::<Option<Vec<_>>>()
        .map(|v| (v, nanos))
        .ok_or_else(|| format!("time column `{name}` holds a time past the year 2262"))
}

/// Appends a batch's column to `column` (`first`: the first batch, which sets its type).
fn append(column: &mut Column, array: &ArrayRef, first: bool) -> Result<(), Problem> {
    let (child, width, list) = match array.data_type() {
        DataType::FixedSizeList(_, n) => {
            let l = array
                .as_any()
                .downcast_ref::<FixedSizeListArray>()
                .ok_or("a list column does not decode")?;
            let n = usize::try_from(*n).map_err(|_| "a negative list size")?;
            (l.values().clone(), n, true)
        }
        _ => (array.clone(), 1, false),
    };
    let Some(data) = flat(&child) else {
        return Err(format!(
            "column `{}` is {}, not one of Elodin's element types (or a fixed-size list of one)",
            column.name,
            array.data_type()
        ));
    };
    if first {
        column.data = ArrayData::empty(data.dtype());
        column.width = width;
        column.list = list;
    } else if (column.width, column.list) != (width, list) {
        return Err(format!(
            "column `{}` changes its type between batches",
            column.name
        ));
    }
    if data.len() != array.len() * width || !column.data.extend_from(&data) {
        return Err(format!("column `{}` does not hold its rows", column.name));
    }
    let rows = array.nulls();
    let items = child.nulls().filter(|n| n.null_count() > 0);
    column.valid.extend((0..array.len()).map(|row| {
        rows.is_none_or(|n| n.is_valid(row))
            && items.is_none_or(|n| (row * width..(row + 1) * width).all(|i| n.is_valid(i)))
    }));
    Ok(())
}

/// A primitive column's values (placeholders where null), or `None` for another type.
fn flat(a: &ArrayRef) -> Option<ArrayData> {
    macro_rules! prim {
        ($t:ty, $v:ident) => {
            ArrayData::$v(
                a.as_any()
                    .downcast_ref::<PrimitiveArray<$t>>()?
                    .values()
                    .to_vec(),
            )
        };
    }
    Some(match a.data_type() {
        DataType::UInt8 => prim!(UInt8Type, U8),
        DataType::UInt16 => prim!(UInt16Type, U16),
        DataType::UInt32 => prim!(UInt32Type, U32),
        DataType::UInt64 => prim!(UInt64Type, U64),
        DataType::Int8 => prim!(Int8Type, I8),
        DataType::Int16 => prim!(Int16Type, I16),
        DataType::Int32 => prim!(Int32Type, I32),
        DataType::Int64 => prim!(Int64Type, I64),
        DataType::Float32 => prim!(Float32Type, F32),
        DataType::Float64 => prim!(Float64Type, F64),
        DataType::Boolean => {
            let b = a.as_any().downcast_ref::<BooleanArray>()?;
            ArrayData::Bool((0..b.len()).map(|i| b.value(i)).collect())
        }
        _ => return None,
    })
}

/// Whether the file's first column is a time column, reading only its head (CSV) or its
/// schema (Parquet's footer, Arrow IPC's schema message): for detection.
pub fn starts_with_time(path: &Path, kind: Kind) -> bool {
    let first = |name: &str| TIME_NAMES.contains(&name);
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    match kind {
        Kind::Csv => {
            use std::io::Read;
            let mut head = Vec::new();
            let _ = file.take(64).read_to_end(&mut head);
            let end = head
                .iter()
                .position(|&b| b == b',' || b == b'\n' || b == b'\r');
            end.and_then(|end| std::str::from_utf8(&head[..end]).ok())
                .is_some_and(first)
        }
        Kind::Parquet => ParquetRecordBatchReaderBuilder::try_new(file)
            .is_ok_and(|b| b.schema().fields().first().is_some_and(|f| first(f.name()))),
        Kind::Arrow => arrow_ipc::reader::FileReader::try_new(std::io::BufReader::new(file), None)
            .is_ok_and(|r| r.schema().fields().first().is_some_and(|f| first(f.name()))),
    }
}

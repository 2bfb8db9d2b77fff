//! An exported CSV file as a table. Arrow's CSV writer prints the time as ISO 8601 without
//! a zone (`2026-11-27T22:58:02.426418`, UTC), or `time_ns` / `time_us` integers; each
//! value as the shortest text that parses back to it, so a float reads back exactly; a
//! list (an unflattened `elodin-db export --format csv`) as one quoted cell `[1.0, 2.0]`;
//! a null as an empty cell. CSV has no types: a column whose cells are all `true`/`false`
//! is bool, all integers u64 (i64 when one is negative), else f64.

use super::table::{Column, Problem, Table, TIME_NAMES};
use crate::model::{ArrayData, Epoch};

pub fn decode(bytes: &[u8]) -> Result<Table, Problem> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(bytes);
    let names: Vec<String> = reader
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(str::to_string)
        .collect();
    let time_name = match names.first() {
        Some(n) if TIME_NAMES.contains(&n.as_str()) => n.clone(),
        _ => return Err("the first column is not `time`, `time_ns` or `time_us`".into()),
    };
    let mut table = Table {
        nanos: time_name == "time_ns",
        ..Table::default()
    };
    let mut cells: Vec<Vec<String>> = vec![Vec::new(); names.len().saturating_sub(1)];
    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record).map_err(|e| e.to_string())? {
        let row = table.times.len() + 2;
        if record.len() != names.len() {
            return Err(format!(
                "line {row} has {} cells, the header {}",
                record.len(),
                names.len()
            ));
        }
        let time = time(&time_name, &record[0])
            .ok_or_else(|| format!("line {row}: `{}` is not a time", &record[0]))?;
        table.times.push(time);
        for (column, cell) in cells.iter_mut().zip(record.iter().skip(1)) {
            column.push(cell.to_string());
        }
    }
    for (name, column) in names.into_iter().skip(1).zip(cells) {
        table.columns.push(parse_column(name, &column)?);
    }
    Ok(table)
}

fn time(name: &str, cell: &str) -> Option<i64> {
    match name {
        "time_ns" => cell.parse().ok(),
        "time_us" => cell.parse::<i64>().ok()?.checked_mul(1000),
        _ => {
            let zoned = if cell.ends_with('Z') {
                cell.to_string()
            } else {
                format!("{cell}Z")
            };
            Epoch::parse_iso8601(&zoned).map(|e| e.unix_ns)
        }
    }
}

/// A cell's elements: a list's items, or the cell itself; `None` for a null.
fn elements(cell: &str) -> Option<(bool, Vec<&str>)> {
    if cell.is_empty() {
        return None;
    }
    match cell.strip_prefix('[').and_then(|c| c.strip_suffix(']')) {
        Some("") => Some((true, Vec::new())),
        Some(items) => Some((true, items.split(',').map(str::trim).collect())),
        None => Some((false, vec![cell])),
    }
}

#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Guess {
    Bool,
    U64,
    I64,
    F64,
}

fn guess(text: &str) -> Option<Guess> {
    if text == "true" || text == "false" {
        Some(Guess::Bool)
    } else if text.parse::<u64>().is_ok() {
        Some(Guess::U64)
    } else if text.parse::<i64>().is_ok() {
        Some(Guess::I64)
    } else if text.parse::<f64>().is_ok() {
        Some(Guess::F64)
    } else {
        None
    }
}

fn parse_column(name: String, cells: &[String]) -> Result<Column, Problem> {
    let unreadable = |what: &str, row: usize| format!("column `{name}`, line {}: {what}", row + 2);
    let mut shape: Option<(bool, usize)> = None;
    let mut kind: Option<Guess> = None;
    for (row, cell) in cells.iter().enumerate() {
        let Some((list, items)) = elements(cell) else {
            continue;
        };
        match shape {
            None => shape = Some((list, items.len())),
            Some(s) if s != (list, items.len()) => {
                return Err(unreadable("a row of another length than the first", row))
            }
            Some(_) => {}
        }
        for item in items {
            if list && item == "null" {
                continue;
            }
            let g =
                guess(item).ok_or_else(|| unreadable(&format!("`{item}` is not a value"), row))?;
            kind = match (kind, g) {
                (None, g) => Some(g),
                (Some(Guess::Bool), Guess::Bool) => Some(Guess::Bool),
                (Some(Guess::Bool), _) | (Some(_), Guess::Bool) => {
                    return Err(unreadable("booleans mixed with numbers", row))
                }
                (Some(k), g) => Some(if g > k { g } else { k }),
            };
        }
    }
    let (list, width) = shape.unwrap_or((false, 1));
    let mut data = match kind.unwrap_or(Guess::F64) {
        Guess::Bool => ArrayData::Bool(Vec::new()),
        Guess::U64 => ArrayData::U64(Vec::new()),
        Guess::I64 => ArrayData::I64(Vec::new()),
        Guess::F64 => ArrayData::F64(Vec::new()),
    };
    let mut valid = Vec::with_capacity(cells.len());
    for cell in cells {
        let items = elements(cell).map(|(_, items)| items);
        let ok = items.as_ref().is_some_and(|i| !i.contains(&"null"));
        valid.push(ok);
        let items = items.filter(|_| ok).unwrap_or_default();
        // A null row holds placeholders, as an Arrow column does.
        let item = |i: usize| items.get(i).copied();
        for i in 0..width {
            let text = item(i);
            match &mut data {
                ArrayData::Bool(v) => v.push(text == Some("true")),
                ArrayData::U64(v) => v.push(text.and_then(|t| t.parse().ok()).unwrap_or(0)),
                ArrayData::I64(v) => v.push(text.and_then(|t| t.parse().ok()).unwrap_or(0)),
                ArrayData::F64(v) => v.push(text.and_then(|t| t.parse().ok()).unwrap_or(0.0)),
                _ => {}
            }
        }
    }
    Ok(Column {
        name,
        data,
        width,
        list,
        valid,
    })
}

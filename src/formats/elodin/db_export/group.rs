//! A file's columns back into the components they came from. `elodin-db export` writes
//! one file per component named after it (`a.world_pos.parquet`), its column named after
//! it too (`a.world_pos`), or with `--flatten` (and always in `save_archive`'s CSV) one
//! column per element, `<name>_<element name or index>` (Elodin 0.16 wrote `<name>.<…>`).
//! With `--join` a file holds an entity's components (`a.parquet`), each column named by
//! the part after the last dot (`world_pos`, or flattened `world_pos_q0` …).
//!
//! What the columns cannot say: a flattened component's shape beyond one dimension (an
//! `f64[3,3]` reads as `f64[9]`), and, in a file both `--join`ed and `--flatten`ed, a
//! scalar from a one-element array (`x_0`); consecutive columns `p_s` sharing `p` are read
//! as one array `p` there.

use super::table::{Column, Problem, Table};
use crate::model::{ArrayData, DType};

/// One component as read from the export: rows of `shape` elements.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub element_names: Option<Vec<String>>,
    /// ns since the Unix epoch, one per row.
    pub times: Vec<i64>,
    /// rows × elements.
    pub data: ArrayData,
}

impl Series {
    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn rows(&self) -> usize {
        self.times.len()
    }
}

/// Columns that make one component: its name, the columns, and the flattened columns'
/// element suffixes (empty for one column holding the whole component).
struct Members {
    name: String,
    columns: Vec<usize>,
    suffixes: Vec<String>,
}

/// The components of the file named `stem` (its name without the extension).
pub fn series(stem: &str, table: Table) -> Result<Vec<Series>, Problem> {
    members(stem, &table.columns)
        .into_iter()
        .map(|m| build(&table, m))
        .collect()
}

/// `name`'s suffix after `prefix` and a separator of flattened columns, if it has one.
fn suffix<'a>(name: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = name.strip_prefix(prefix)?;
    rest.strip_prefix('_')
        .or_else(|| rest.strip_prefix('.'))
        .filter(|s| !s.is_empty())
}

fn members(stem: &str, columns: &[Column]) -> Vec<Members> {
    if let [c] = columns {
        if c.name == stem {
            return vec![Members {
                name: stem.to_string(),
                columns: vec![0],
                suffixes: Vec::new(),
            }];
        }
    }
    let flattened: Option<Vec<String>> = columns
        .iter()
        .map(|c| {
            (!c.list)
                .then(|| suffix(&c.name, stem))
                .flatten()
                .map(str::to_string)
        })
        .collect();
    if let Some(suffixes) = flattened.filter(|s| !s.is_empty()) {
        return vec![Members {
            name: stem.to_string(),
            columns: (0..columns.len()).collect(),
            suffixes,
        }];
    }
    // A `--join`ed file: the entity's components, flattened ones as runs of columns that
    // share the part before their last separator.
    let split = |c: &Column| -> Option<(String, String)> {
        let at = c.name.rfind(['_', '.']).filter(|_| !c.list)?;
        let (prefix, suffix) = (&c.name[..at], &c.name[at + 1..]);
        (!prefix.is_empty() && !suffix.is_empty()).then(|| (prefix.to_string(), suffix.to_string()))
    };
    let splits: Vec<Option<(String, String)>> = columns.iter().map(split).collect();
    let mut groups = Vec::new();
    let mut i = 0;
    while i < columns.len() {
        let prefix = splits[i].as_ref().map(|(p, _)| p);
        let run = (i..columns.len())
            .take_while(|&j| prefix.is_some() && splits[j].as_ref().map(|(p, _)| p) == prefix)
            .count();
        if let (Some(prefix), 2..) = (prefix, run) {
            groups.push(Members {
                name: format!("{stem}.{prefix}"),
                columns: (i..i + run).collect(),
                suffixes: splits[i..i + run]
                    .iter()
                    .flatten()
                    .map(|(_, s)| s.clone())
                    .collect(),
            });
            i += run;
        } else {
            groups.push(Members {
                name: format!("{stem}.{}", columns[i].name),
                columns: vec![i],
                suffixes: Vec::new(),
            });
            i += 1;
        }
    }
    groups
}

fn build(table: &Table, m: Members) -> Result<Series, Problem> {
    let columns: Vec<&Column> = m.columns.iter().map(|&i| &table.columns[i]).collect();
    let dtype = columns[0].data.dtype();
    if let Some(c) = columns.iter().find(|c| c.data.dtype() != dtype) {
        return Err(format!(
            "column `{}` ({}) is not of the type of the others of {} ({})",
            c.name,
            c.data.dtype().name(),
            m.name,
            dtype.name()
        ));
    }
    let (shape, element_names) = if m.suffixes.is_empty() {
        let c = columns[0];
        (if c.list { vec![c.width] } else { Vec::new() }, None)
    } else {
        let indices = m
            .suffixes
            .iter()
            .enumerate()
            .all(|(i, s)| *s == i.to_string());
        (vec![m.suffixes.len()], (!indices).then_some(m.suffixes))
    };
    let mut series = Series {
        name: m.name,
        dtype,
        shape,
        element_names,
        times: Vec::new(),
        data: ArrayData::empty(dtype),
    };
    for (row, &t) in table.times.iter().enumerate() {
        if !columns.iter().all(|c| c.valid.get(row) == Some(&true)) {
            continue;
        }
        series.times.push(t);
        for c in &columns {
            let range = row * c.width..(row + 1) * c.width;
            if !series.data.extend_from_range(&c.data, range) {
                return Err(format!("column `{}` does not hold row {row}", c.name));
            }
        }
    }
    Ok(series)
}

//! What the reader learns about a file's rows as it goes, in state bounded by the number of
//! columns: the time rules of §C3 between consecutive rows, time-step statistics for
//! `inspect`, and (`--deep`) NaN and infinities per column.

use serde_json::json;

use super::codes;
use super::g15::G15;
use crate::model::Nanos;
use crate::report::render::{first_and_last, grouped};
use crate::report::{Fact, Finding, Severity};

/// Distinct step sizes tracked to find the usual one; a recording with more is irregular
/// anyway, and the rest are counted as such.
const TRACKED_STEPS: usize = 64;

/// Time steps between consecutive rows that were read, in nanoseconds.
#[derive(Debug, Default)]
pub struct Steps {
    count: u64,
    min: Nanos,
    max: Nanos,
    sum: i128,
    /// (step, how often), at most [`TRACKED_STEPS`] of them.
    seen: Vec<(Nanos, u64)>,
    untracked: u64,
}

impl Steps {
    pub fn observe(&mut self, step: Nanos) {
        if self.count == 0 {
            self.min = step;
            self.max = step;
        }
        self.count += 1;
        self.min = self.min.min(step);
        self.max = self.max.max(step);
        self.sum += i128::from(step);
        if let Some((_, n)) = self.seen.iter_mut().find(|(s, _)| *s == step) {
            *n += 1;
        } else if self.seen.len() < TRACKED_STEPS {
            self.seen.push((step, 1));
        } else {
            self.untracked += 1;
        }
    }

    /// The most frequent step, and how many steps differ from it by more than 1 ns (times
    /// are whole nanoseconds, so a step of 1/3 s alternates between two values) and 10^-9
    /// of it.
    fn usual(&self) -> Option<(Nanos, u64)> {
        let (usual, _) = *self.seen.iter().max_by_key(|(s, n)| (*n, -*s))?;
        let tolerance = 1 + (usual.unsigned_abs() / 1_000_000_000) as i64;
        let regular: u64 = self
            .seen
            .iter()
            .filter(|(s, _)| (s - usual).abs() <= tolerance)
            .map(|(_, n)| n)
            .sum();
        Some((usual, self.count - regular))
    }

    fn fact(&self) -> Fact {
        let Some((usual, irregular)) = self.usual() else {
            return Fact::new(
                "time_step",
                "no steps (fewer than two rows)",
                json!({"steps": 0}),
            );
        };
        let mean = self.sum as f64 / self.count as f64;
        let s = |ns: f64| G15::new(ns / 1e9).as_str().to_string();
        let text = format!(
            "usual {} s, min {} s, mean {} s, max {} s over {} steps; {} irregular",
            s(usual as f64),
            s(self.min as f64),
            s(mean),
            s(self.max as f64),
            grouped(self.count),
            grouped(irregular)
        );
        Fact::new(
            "time_step",
            text,
            json!({
                "steps": self.count,
                "usual_ns": usual,
                "min_ns": self.min,
                "max_ns": self.max,
                "mean_ns": mean,
                "irregular": irregular,
            }),
        )
    }
}

/// NaN and infinities met in one column (`--deep`).
#[derive(Debug, Default, Clone)]
pub struct NonFinite {
    nan: u64,
    inf: u64,
    /// Row, byte offset and time of the first.
    first: Option<(u64, u64, Nanos)>,
}

impl NonFinite {
    pub fn observe(&mut self, x: f64, row: u64, offset: u64, time: Nanos) {
        if x.is_nan() {
            self.nan += 1;
        } else {
            self.inf += 1;
        }
        self.first.get_or_insert((row, offset, time));
    }

    /// The column's finding, if it had any.
    pub fn finding(&self, column: &str) -> Option<Finding> {
        let (row, offset, time) = self.first?;
        let message = format!(
            "column {column}: {} NaN and {} infinite values; the first in row {row}, at t = {} s",
            grouped(self.nan),
            grouped(self.inf),
            G15::new(time as f64 / 1e9).as_str()
        );
        Some(Finding::new(Severity::Warning, codes::NONFINITE, message).at(offset, row))
    }
}

/// `inspect`'s facts: the columns, the rows, the time steps.
pub fn facts(columns: &[String], rows: u64, kept_rows: u64, steps: &Steps) -> Vec<Fact> {
    let names: Vec<String> = columns.to_vec();
    let shown = first_and_last(&names, 3, "columns");
    let columns_fact = Fact::new(
        "columns",
        format!(
            "time + {} signal columns:\n{}",
            grouped(columns.len() as u64),
            shown.join("\n")
        ),
        json!({"count": columns.len(), "names": names}),
    );
    let rows_fact = Fact::new(
        "rows",
        if rows == kept_rows {
            format!("{} (one frame each)", grouped(rows))
        } else {
            format!(
                "{} ({} read as frames; the others are damaged, see `simrec validate`)",
                grouped(rows),
                grouped(kept_rows)
            )
        },
        json!({"rows": rows, "frames": kept_rows}),
    );
    vec![columns_fact, rows_fact, steps.fact()]
}

/// A finding about a row: `line N: …`, at `offset`, with the row index.
pub fn on_row(
    severity: Severity,
    code: &'static str,
    line: u64,
    offset: u64,
    row: u64,
    what: String,
) -> Finding {
    Finding::new(severity, code, format!("line {line}: {what}")).at(offset, row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_step_and_the_irregular_ones() {
        let mut s = Steps::default();
        for step in [
            333_333_333,
            333_333_334,
            333_333_333,
            500_000_000,
            333_333_333,
        ] {
            s.observe(step);
        }
        assert_eq!(s.usual(), Some((333_333_333, 1)));
        assert_eq!((s.min, s.max, s.count), (333_333_333, 500_000_000, 5));
        let fact = s.fact();
        assert_eq!(fact.json["irregular"], 1);
        assert_eq!(fact.json["usual_ns"], 333_333_333);
        assert!(
            fact.text
                .starts_with("usual 0.333333333 s, min 0.333333333 s"),
            "{}",
            fact.text
        );
        assert_eq!(Steps::default().fact().json["steps"], 0);
    }
}

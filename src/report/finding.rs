//! Findings: what validation (and lenient reading) has to say about a file.

use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One problem (or notable fact) found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    /// Stable code, for scripts: `NANOVER_TRUNCATED_PAYLOAD`.
    pub code: &'static str,
    pub message: String,
    /// Byte offset of the record (or of the problem) in the file.
    pub offset: Option<u64>,
    /// 0-based record index in the file.
    pub record: Option<u64>,
    /// What to run to fix it, where something can.
    pub hint: Option<String>,
}

impl Finding {
    pub fn new(severity: Severity, code: &'static str, message: impl Into<String>) -> Finding {
        Finding {
            severity,
            code,
            message: message.into(),
            offset: None,
            record: None,
            hint: None,
        }
    }

    pub fn at(mut self, offset: u64, record: u64) -> Finding {
        self.offset = Some(offset);
        self.record = Some(record);
        self
    }

    pub fn offset(mut self, offset: u64) -> Finding {
        self.offset = Some(offset);
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Finding {
        self.hint = Some(hint.into());
        self
    }
}

/// `NANOVER_TRUNCATED_PAYLOAD at byte 23268, record 31: the file ends inside this record…`
impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code)?;
        match (self.offset, self.record) {
            (Some(o), Some(r)) => write!(f, " at byte {o}, record {r}")?,
            (Some(o), None) => write!(f, " at byte {o}")?,
            (None, Some(r)) => write!(f, " at record {r}")?,
            (None, None) => {}
        }
        write!(f, ": {}", self.message)
    }
}

/// Findings of one file, with counts kept exact and storage capped per code,
/// so a long damaged file cannot grow memory without bound.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    kept: Vec<Finding>,
    per_code: BTreeMap<&'static str, (Severity, u64)>,
}

/// How many findings of one code are kept in full; the rest are only counted.
pub const KEPT_PER_CODE: u64 = 200;

impl Extend<Finding> for Findings {
    fn extend<I: IntoIterator<Item = Finding>>(&mut self, findings: I) {
        for f in findings {
            self.push(f);
        }
    }
}

impl Findings {
    pub fn push(&mut self, finding: Finding) {
        let entry = self
            .per_code
            .entry(finding.code)
            .or_insert((finding.severity, 0));
        entry.1 += 1;
        if entry.1 <= KEPT_PER_CODE {
            self.kept.push(finding);
        }
    }

    /// Adds every finding of `other` after these, counts included.
    pub fn append(&mut self, other: Findings) {
        let mut kept: BTreeMap<&'static str, u64> = self
            .per_code
            .iter()
            .map(|(code, (_, n))| (*code, (*n).min(KEPT_PER_CODE)))
            .collect();
        for f in other.kept {
            let n = kept.entry(f.code).or_insert(0);
            if *n < KEPT_PER_CODE {
                *n += 1;
                self.kept.push(f);
            }
        }
        for (code, (severity, n)) in other.per_code {
            self.per_code.entry(code).or_insert((severity, 0)).1 += n;
        }
    }

    /// Turns every warning into an error (`--strict`), counts included.
    pub fn promote_warnings(&mut self) {
        let promote = |s: &mut Severity| {
            if *s == Severity::Warning {
                *s = Severity::Error;
            }
        };
        self.kept.iter_mut().for_each(|f| promote(&mut f.severity));
        self.per_code.values_mut().for_each(|(s, _)| promote(s));
    }

    /// The findings kept in full, in the order they were found.
    pub fn list(&self) -> &[Finding] {
        &self.kept
    }

    pub fn count(&self, severity: Severity) -> u64 {
        self.per_code
            .values()
            .filter(|(s, _)| *s == severity)
            .map(|(_, n)| n)
            .sum()
    }

    /// How many findings of `code` there were, kept or only counted.
    pub fn total(&self, code: &str) -> u64 {
        self.per_code.get(code).map_or(0, |(_, n)| *n)
    }

    /// Codes whose findings were more than [`KEPT_PER_CODE`]: (code, severity, total).
    pub fn truncated(&self) -> impl Iterator<Item = (&'static str, Severity, u64)> + '_ {
        self.per_code
            .iter()
            .filter(|(_, (_, n))| *n > KEPT_PER_CODE)
            .map(|(c, (s, n))| (*c, *s, *n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_stay_exact_past_the_cap_and_strict_promotes_them() {
        let mut f = Findings::default();
        for i in 0..(KEPT_PER_CODE + 5) {
            f.push(Finding::new(Severity::Warning, "W", "w").at(i, i));
        }
        f.push(Finding::new(Severity::Info, "I", "i"));
        assert_eq!(f.list().len() as u64, KEPT_PER_CODE + 1);
        assert_eq!(f.count(Severity::Warning), KEPT_PER_CODE + 5);
        assert_eq!(
            f.truncated().collect::<Vec<_>>(),
            [("W", Severity::Warning, KEPT_PER_CODE + 5)]
        );
        f.promote_warnings();
        assert_eq!(
            (
                f.count(Severity::Error),
                f.count(Severity::Warning),
                f.count(Severity::Info)
            ),
            (KEPT_PER_CODE + 5, 0, 1)
        );
        assert!(f.list()[..KEPT_PER_CODE as usize]
            .iter()
            .all(|x| x.severity == Severity::Error));
    }

    #[test]
    fn append_keeps_counts_exact_and_the_cap_per_code() {
        let mut a = Findings::default();
        for i in 0..(KEPT_PER_CODE - 2) {
            a.push(Finding::new(Severity::Warning, "W", "a").at(i, i));
        }
        let mut b = Findings::default();
        b.push(Finding::new(Severity::Error, "E", "b"));
        for i in 0..5 {
            b.push(Finding::new(Severity::Warning, "W", "b").at(i, i));
        }
        a.append(b);
        assert_eq!(a.count(Severity::Warning), KEPT_PER_CODE + 3);
        assert_eq!(a.count(Severity::Error), 1);
        // 198 + 2 of b's warnings are kept, after b's error.
        assert_eq!(a.list().len() as u64, KEPT_PER_CODE + 1);
        assert_eq!(a.list()[KEPT_PER_CODE as usize - 2].code, "E");
        assert_eq!(a.list().last().map(|f| f.message.as_str()), Some("b"));
    }
}

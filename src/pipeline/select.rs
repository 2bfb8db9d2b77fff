//! Key selection with `--include` / `--exclude` globs (anchored; `*` crosses dots; exclude wins).

use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::formats::{ReadError, Source};
use crate::model::{Header, Record};
use crate::report::Findings;

#[derive(Debug, Clone)]
pub struct KeyFilter {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

#[derive(Debug, thiserror::Error)]
#[error("invalid key pattern `{pattern}`: {reason}")]
pub struct PatternError {
    pub pattern: String,
    pub reason: String,
}

fn globs(patterns: &[String]) -> Result<Option<GlobSet>, PatternError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        let glob = GlobBuilder::new(p)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map_err(|e| PatternError {
                pattern: p.clone(),
                reason: e.kind().to_string(),
            })?;
        set.add(glob);
    }
    set.build().map(Some).map_err(|e| PatternError {
        pattern: patterns.join(" "),
        reason: e.to_string(),
    })
}

impl KeyFilter {
    pub fn new(include: &[String], exclude: &[String]) -> Result<KeyFilter, PatternError> {
        Ok(KeyFilter {
            include: globs(include)?,
            exclude: globs(exclude)?,
        })
    }

    pub fn keeps(&self, key: &str) -> bool {
        self.include.as_ref().is_none_or(|g| g.is_match(key))
            && !self.exclude.as_ref().is_some_and(|g| g.is_match(key))
    }

    /// Drops unselected keys. A record left with no keys is still kept (it still marks a
    /// frame, and a reset stays a reset); its original bytes go when anything changed.
    pub fn apply(&self, record: &mut Record) {
        let before = record.values.len();
        record.values.retain(|(k, _)| self.keeps(k));
        if record.values.len() != before {
            record.raw = None;
        }
    }
}

/// A source with a key filter applied to every record.
pub struct Selected<S> {
    inner: S,
    filter: KeyFilter,
}

impl<S: Source> Selected<S> {
    pub fn new(inner: S, filter: KeyFilter) -> Selected<S> {
        Selected { inner, filter }
    }
}

impl<S: Source> Iterator for Selected<S> {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut item = self.inner.next()?;
        if let Ok(r) = &mut item {
            self.filter.apply(r);
        }
        Some(item)
    }
}

impl<S: Source> Source for Selected<S> {
    fn header(&self) -> &Header {
        self.inner.header()
    }
    fn findings(&self) -> Vec<(&Path, &Findings)> {
        self.inner.findings()
    }
    fn progress(&self) -> (u64, u64) {
        self.inner.progress()
    }
    fn recycle(&mut self, record: Record) {
        self.inner.recycle(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(include: &[&str], exclude: &[&str]) -> KeyFilter {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        KeyFilter::new(&v(include), &v(exclude)).unwrap()
    }

    #[test]
    fn globs_are_anchored_cross_dots_and_exclude_wins() {
        let f = filter(&["particle.*"], &["*.velocities"]);
        assert!(f.keeps("particle.positions"));
        assert!(f.keeps("particle.forces.system"));
        assert!(!f.keeps("particle.velocities"));
        assert!(!f.keeps("xparticle.positions"));
        let f = filter(&["energy.?otal", "[ab]*"], &[]);
        assert!(f.keeps("energy.total"));
        assert!(f.keeps("bond.pairs"));
        assert!(!f.keeps("energy.kinetic"));
        let f = filter(&["**.count"], &["[!p]*"]);
        assert!(f.keeps("particle.count"));
        assert!(!f.keeps("residue.count"));
        assert!(filter(&[r"a\*"], &[]).keeps("a*"));
        assert!(!filter(&[r"a\*"], &[]).keeps("ab"));
        assert!(!filter(&["Particle.*"], &[]).keeps("particle.count"));
    }
}

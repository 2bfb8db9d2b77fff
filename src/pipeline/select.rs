//! Selections: `--channel` globs on channel names, `--include` / `--exclude` globs on keys
//! (anchored; `*` crosses dots; exclude wins), and what they matched, so that a selection
//! matching nothing can say so.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::frames::FrameCounter;
use crate::formats::{ReadError, Source};
use crate::model::{ChannelId, Header, Record};
use crate::report::Findings;

/// Globs (or regular expressions), and which of them matched anything so far.
#[derive(Debug, Clone)]
struct Patterns {
    texts: Vec<String>,
    set: PatternSet,
    matched: Vec<bool>,
    scratch: Vec<usize>,
}

#[derive(Debug, Clone)]
enum PatternSet {
    /// Anchored globs; `*` crosses dots.
    Glob(GlobSet),
    /// Regular expressions searched anywhere in the name (Icarus's own filters).
    Regex(regex::RegexSet),
}

impl Patterns {
    fn new(patterns: &[String]) -> Result<Option<Patterns>, PatternError> {
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
        let set = set.build().map_err(|e| PatternError {
            pattern: patterns.join(" "),
            reason: e.to_string(),
        })?;
        Ok(Some(Patterns::of(patterns, PatternSet::Glob(set))))
    }

    fn regex(patterns: &[String]) -> Result<Option<Patterns>, PatternError> {
        if patterns.is_empty() {
            return Ok(None);
        }
        for p in patterns {
            regex::Regex::new(p).map_err(|e| PatternError {
                pattern: p.clone(),
                reason: e.to_string(),
            })?;
        }
        let set = regex::RegexSet::new(patterns).map_err(|e| PatternError {
            pattern: patterns.join(" "),
            reason: e.to_string(),
        })?;
        Ok(Some(Patterns::of(patterns, PatternSet::Regex(set))))
    }

    fn of(patterns: &[String], set: PatternSet) -> Patterns {
        Patterns {
            texts: patterns.to_vec(),
            set,
            matched: vec![false; patterns.len()],
            scratch: Vec::new(),
        }
    }

    fn is_match(&self, name: &str) -> bool {
        match &self.set {
            PatternSet::Glob(g) => g.is_match(name),
            PatternSet::Regex(r) => r.is_match(name),
        }
    }

    /// Whether `name` matches, noting which patterns did.
    fn observe(&mut self, name: &str) -> bool {
        match &self.set {
            PatternSet::Glob(g) => g.matches_into(name, &mut self.scratch),
            PatternSet::Regex(r) => {
                self.scratch.clear();
                self.scratch.extend(r.matches(name).iter());
            }
        }
        for &i in &self.scratch {
            self.matched[i] = true;
        }
        !self.scratch.is_empty()
    }

    fn unmatched(&self) -> impl Iterator<Item = &str> {
        self.texts
            .iter()
            .zip(&self.matched)
            .filter(|(_, m)| !**m)
            .map(|(t, _)| t.as_str())
    }
}

#[derive(Debug, Clone)]
pub struct KeyFilter {
    include: Option<Patterns>,
    exclude: Option<Patterns>,
}

// Defined with the read errors, which carry it (inspect reads with a selection).
pub use crate::formats::read_error::PatternError;

impl KeyFilter {
    pub fn new(include: &[String], exclude: &[String]) -> Result<KeyFilter, PatternError> {
        Ok(KeyFilter {
            include: Patterns::new(include)?,
            exclude: Patterns::new(exclude)?,
        })
    }

    /// Whether this filter keeps everything.
    pub fn is_empty(&self) -> bool {
        self.include.is_none() && self.exclude.is_none()
    }

    pub fn keeps(&self, key: &str) -> bool {
        self.include.as_ref().is_none_or(|g| g.is_match(key))
            && !self.exclude.as_ref().is_some_and(|g| g.is_match(key))
    }

    /// Drops unselected keys. A record left with no keys is still kept (it still marks a
    /// frame, and a reset stays a reset); its original bytes go when anything changed.
    /// Returns how many keys it kept.
    pub fn apply(&mut self, record: &mut Record) -> usize {
        if self.is_empty() {
            return record.values.len();
        }
        let before = record.values.len();
        let (include, exclude) = (&mut self.include, &mut self.exclude);
        record.values.retain(|(k, _)| {
            let included = include.as_mut().is_none_or(|g| g.observe(k));
            let excluded = exclude.as_mut().is_some_and(|g| g.observe(k));
            included && !excluded
        });
        if record.values.len() != before {
            record.raw = None;
        }
        record.values.len()
    }
}

/// Which channels are read: `--channel` patterns (none: every channel), less those that
/// match an `--exclude-channel` pattern (exclude wins) and, with `--no-derivatives`, those
/// whose name contains `_dot`.
#[derive(Debug, Clone, Default)]
pub struct ChannelRules {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// The patterns are regular expressions searched anywhere in the name, not globs.
    pub regex: bool,
    pub no_derivatives: bool,
}

#[derive(Debug, Clone)]
pub struct ChannelFilter {
    include: Option<Patterns>,
    exclude: Option<Patterns>,
    no_derivatives: bool,
}

impl ChannelFilter {
    /// `None` when the rules keep every channel.
    pub fn new(rules: &ChannelRules) -> Result<Option<ChannelFilter>, PatternError> {
        let compile = if rules.regex {
            Patterns::regex
        } else {
            Patterns::new
        };
        let filter = ChannelFilter {
            include: compile(&rules.include)?,
            exclude: compile(&rules.exclude)?,
            no_derivatives: rules.no_derivatives,
        };
        let keeps_all =
            filter.include.is_none() && filter.exclude.is_none() && !filter.no_derivatives;
        Ok((!keeps_all).then_some(filter))
    }

    /// Whether the channel `name` is read, noting which patterns matched.
    fn observe(&mut self, name: &str) -> bool {
        let included = self.include.as_mut().is_none_or(|p| p.observe(name));
        let excluded = self.exclude.as_mut().is_some_and(|p| p.observe(name));
        included && !excluded && !(self.no_derivatives && name.contains("_dot"))
    }
}

/// What a command selects of a recording: channels, keys and frames.
#[derive(Debug, Clone)]
pub struct Selection {
    pub channels: Option<ChannelFilter>,
    pub keys: KeyFilter,
    /// Keep frames 0, N, 2N … (0-based positions); records outside frames are kept.
    pub decimate: Option<u64>,
}

impl Selection {
    pub fn new(
        channels: &[String],
        include: &[String],
        exclude: &[String],
    ) -> Result<Selection, PatternError> {
        let rules = ChannelRules {
            include: channels.to_vec(),
            ..ChannelRules::default()
        };
        Selection::with_rules(&rules, include, exclude)
    }

    pub fn with_rules(
        channels: &ChannelRules,
        include: &[String],
        exclude: &[String],
    ) -> Result<Selection, PatternError> {
        Ok(Selection {
            channels: ChannelFilter::new(channels)?,
            keys: KeyFilter::new(include, exclude)?,
            decimate: None,
        })
    }

    /// Whether anything is selected away.
    pub fn is_everything(&self) -> bool {
        self.channels.is_none() && self.keys.is_empty() && self.decimate.is_none_or(|n| n <= 1)
    }
}

impl From<KeyFilter> for Selection {
    fn from(keys: KeyFilter) -> Selection {
        Selection {
            channels: None,
            keys,
            decimate: None,
        }
    }
}

/// What a selection let through, read after the run: patterns that matched nothing, and
/// whether the output holds anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectionReport {
    /// One warning per pattern that matched nothing.
    pub unmatched: Vec<String>,
    /// Records let through.
    pub records: u64,
    /// Keys let through over all records (only counted when `--include` is given).
    pub keys: u64,
    /// Whether a selection was asked for at all.
    pub selective: bool,
    pub(crate) include_given: bool,
}

impl SelectionReport {
    /// Why the output would be empty, if it would: nothing let through, or no key left by
    /// `--include`.
    pub fn empty_because(&self) -> Option<&'static str> {
        if !self.selective {
            return None;
        }
        if self.records == 0 {
            Some("no record was selected")
        } else if self.include_given && self.keys == 0 {
            Some("no key was selected by --include")
        } else {
            None
        }
    }
}

/// Shared handle on a selection's report: the adapters fill it as records pass, the command
/// reads it once the run is over.
pub type SelectionHandle = Rc<RefCell<SelectionReport>>;

/// A source with a selection applied: records of unselected channels skipped (the header
/// lists only the selected channels), unselected keys dropped.
pub struct Selected<S: Source> {
    inner: S,
    header: Header,
    /// New id of each input channel; `None` when skipped.
    ids: Vec<Option<ChannelId>>,
    selection: Selection,
    report: SelectionHandle,
    /// Whether the inner source is exhausted (and key warnings were noted).
    finished: bool,
    /// Whether channel patterns that matched nothing were noted.
    channels_noted: bool,
    /// Frame positions, for `decimate`.
    frames: FrameCounter,
}

impl<S: Source> Selected<S> {
    pub fn new(inner: S, selection: impl Into<Selection>) -> Selected<S> {
        Selected::reporting(inner, selection, SelectionHandle::default())
    }

    /// Like [`Selected::new`], filling `report` (shared with a [`Window`](super::Window)
    /// before it, say).
    pub fn reporting(
        inner: S,
        selection: impl Into<Selection>,
        report: SelectionHandle,
    ) -> Selected<S> {
        let mut selection: Selection = selection.into();
        let mut header = inner.header().clone();
        let mut ids = Vec::with_capacity(header.channels.len());
        if let Some(filter) = &mut selection.channels {
            let channels = std::mem::take(&mut header.channels);
            for c in channels {
                ids.push(filter.observe(&c.name).then(|| header.add_channel(c)));
            }
        } else {
            ids.extend((0..header.channels.len() as ChannelId).map(Some));
        }
        {
            let mut r = report.borrow_mut();
            r.selective |= !selection.is_everything();
            r.include_given = selection.keys.include.is_some();
        }
        let mut selected = Selected {
            inner,
            header,
            ids,
            selection,
            report,
            finished: false,
            channels_noted: false,
            frames: FrameCounter::default(),
        };
        // Patterns are judged once reading ends (or stops, on drop): a reader may discover
        // channels as it reads (XREC), also behind the channels another input declared at
        // open (a merge).
        // Decimation counts the frames of every record, selected or not: the reader must
        // make them all.
        if selected.selection.channels.is_some() && selected.selection.decimate.unwrap_or(1) <= 1 {
            selected.select_channels(&[]);
        }
        selected
    }

    /// The report this selection fills; complete once the source is exhausted.
    pub fn report(&self) -> SelectionHandle {
        Rc::clone(&self.report)
    }

    /// Warns (once) of `--channel` / `--exclude-channel` patterns that match no channel.
    fn note_unmatched_channels(&mut self) {
        if std::mem::replace(&mut self.channels_noted, true) {
            return;
        }
        self.follow_new_channels();
        let Some(c) = &self.selection.channels else {
            return;
        };
        let names: Vec<&str> = self
            .inner
            .header()
            .channels
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        let mut report = self.report.borrow_mut();
        for (flag, patterns) in [("--channel", &c.include), ("--exclude-channel", &c.exclude)] {
            for p in patterns.iter().flat_map(|p| p.unmatched()) {
                report.unmatched.push(format!(
                    "{flag} `{p}` matches no channel (channels: {})",
                    names.join(", ")
                ));
            }
        }
    }

    /// Takes in the channels the inner source added since the last look (a reader that
    /// discovers channels while it reads), selecting them as the header's were.
    fn follow_new_channels(&mut self) {
        let channels = &self.inner.header().channels;
        for c in channels.get(self.ids.len()..).unwrap_or_default() {
            let keep = match &mut self.selection.channels {
                Some(filter) => filter.observe(&c.name),
                None => true,
            };
            self.ids
                .push(keep.then(|| self.header.add_channel(c.clone())));
        }
    }

    /// Warns of channel patterns that matched no channel and key patterns that matched no
    /// key: known once every record was read.
    fn note_unmatched_keys(&mut self) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        self.note_unmatched_channels();
        let mut report = self.report.borrow_mut();
        for (flag, patterns) in [
            ("--include", &self.selection.keys.include),
            ("--exclude", &self.selection.keys.exclude),
        ] {
            if let Some(p) = patterns {
                report.unmatched.extend(
                    p.unmatched()
                        .map(|p| format!("{flag} `{p}` matched no key of any record read")),
                );
            }
        }
    }
}

impl<S: Source> Drop for Selected<S> {
    /// A source left before its end (a window that stops early) still warns of channel
    /// patterns that matched nothing it had met.
    fn drop(&mut self) {
        self.note_unmatched_channels();
    }
}

impl<S: Source> Iterator for Selected<S> {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let Some(item) = self.inner.next() else {
                self.note_unmatched_keys();
                return None;
            };
            let mut record = match item {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            };
            if let Some(n) = self.selection.decimate.filter(|n| *n > 1) {
                // Every record is counted, selected or not, so positions are the input's.
                if self.frames.observe(&record).is_some_and(|at| at % n != 0) {
                    self.inner.recycle(record);
                    continue;
                }
            }
            if record.channel as usize >= self.ids.len() {
                self.follow_new_channels();
            }
            match self.ids.get(record.channel as usize).copied().flatten() {
                Some(id) => record.channel = id,
                None => {
                    self.inner.recycle(record);
                    continue;
                }
            }
            let kept = self.selection.keys.apply(&mut record);
            let mut report = self.report.borrow_mut();
            report.records += 1;
            report.keys += kept as u64;
            return Some(Ok(record));
        }
    }
}

impl<S: Source> Source for Selected<S> {
    fn header(&self) -> &Header {
        &self.header
    }
    fn findings(&self) -> Vec<(&Path, &Findings)> {
        self.inner.findings()
    }
    fn progress(&self) -> (u64, u64) {
        self.inner.progress()
    }
    fn facts(&self) -> Vec<crate::report::Fact> {
        self.inner.facts()
    }
    fn select_channels(&mut self, wanted: &[bool]) {
        let own: Vec<bool> = self
            .ids
            .iter()
            .map(|id| id.is_some_and(|id| wanted.get(id as usize).copied().unwrap_or(true)))
            .collect();
        self.inner.select_channels(&own);
    }
    fn recycle(&mut self, mut record: Record) {
        // Back to the reader under its own channel id.
        if self.selection.channels.is_some() {
            if let Some(old) = self.ids.iter().position(|id| *id == Some(record.channel)) {
                record.channel = old as ChannelId;
            }
        }
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

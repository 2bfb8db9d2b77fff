//! Time-step statistics (spec §A11 `ICAREC_IRREGULAR_STEP`, `inspect`'s dt facts) in memory
//! bounded whatever the recording's length: min, max and mean exactly, and a count per
//! distinct step value for the median, up to [`DISTINCT`] distinct values. A regular
//! recording has a handful (its steps differ by an ulp or two); steps beyond the limit are
//! counted as irregular.

use std::collections::BTreeMap;

/// Distinct step values counted for the median.
pub const DISTINCT: usize = 4096;

/// An f64's bits as an integer that sorts like the f64 (total order).
fn key(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    b ^ ((((b >> 63) as u64) >> 1) as i64)
}

fn value(k: i64) -> f64 {
    f64::from_bits((k ^ ((((k >> 63) as u64) >> 1) as i64)) as u64)
}

#[derive(Debug, Clone, Default)]
pub struct Steps {
    pub count: u64,
    pub min: Option<f64>,
    pub max: Option<f64>,
    sum: f64,
    counts: BTreeMap<i64, u64>,
    /// Steps whose value was not among the first [`DISTINCT`] distinct ones.
    pub uncounted: u64,
}

impl Steps {
    pub fn add(&mut self, step: f64) {
        self.count += 1;
        self.sum += step;
        self.min = Some(self.min.map_or(step, |m| m.min(step)));
        self.max = Some(self.max.map_or(step, |m| m.max(step)));
        let k = key(step);
        if let Some(n) = self.counts.get_mut(&k) {
            *n += 1;
        } else if self.counts.len() < DISTINCT {
            self.counts.insert(k, 1);
        } else {
            self.uncounted += 1;
        }
    }

    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }

    /// The median of the counted steps (the lower middle one for an even count).
    pub fn median(&self) -> Option<f64> {
        let n: u64 = self.counts.values().sum();
        if n == 0 {
            return None;
        }
        let middle = (n - 1) / 2;
        let mut seen = 0;
        for (k, c) in &self.counts {
            seen += c;
            if seen > middle {
                return Some(value(*k));
            }
        }
        None
    }

    /// Steps differing from the median by more than 1e-9 relative, and every uncounted one.
    pub fn irregular(&self) -> u64 {
        let Some(m) = self.median() else { return 0 };
        // NaN is never near.
        let near = |s: f64| (s - m).abs() <= 1e-9 * m.abs();
        self.counts
            .iter()
            .filter(|(k, _)| !near(value(**k)))
            .map(|(_, c)| c)
            .sum::<u64>()
            + self.uncounted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_irregular_steps() {
        let mut s = Steps::default();
        for t in [0.01, 0.01, 0.01 + 1e-13, 0.02, -0.5, 0.01] {
            s.add(t);
        }
        assert_eq!(s.median(), Some(0.01));
        assert_eq!(
            s.irregular(),
            2,
            "0.02 and -0.5; 1e-13 off is within 1e-9 relative"
        );
        assert_eq!((s.min, s.max), (Some(-0.5), Some(0.02)));
        assert!(key(-1.0) < key(-0.5) && key(-0.5) < key(0.0) && key(0.0) < key(1e-300));
        assert_eq!(value(key(-2.5)), -2.5);
        let mut nan = Steps::default();
        nan.add(f64::NAN);
        nan.add(1.0);
        assert_eq!(nan.irregular(), 1);
    }
}

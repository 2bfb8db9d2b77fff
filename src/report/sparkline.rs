//! A one-line picture of a scalar key over time for `inspect --deep` (`▁▂▄█▆▃`), gathered
//! while the recording streams: a fixed number of time buckets whose width doubles (pairs
//! merged) whenever a sample falls beyond them, so the span need not be known in advance and
//! memory stays at the buckets.

/// Buckets kept: the sparkline is at most this wide, and at least half of it once the
/// samples span more than a bucket.
pub const WIDTH: usize = 32;

const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

#[derive(Debug, Clone, PartialEq)]
pub struct Sparkline {
    /// Time of the first sample: bucket 0 starts there.
    start: i64,
    /// Nanoseconds per bucket.
    width: u64,
    /// Sum and count of the samples of each bucket.
    buckets: Vec<(f64, u64)>,
}

impl Sparkline {
    pub fn new(start: i64) -> Sparkline {
        Sparkline {
            start,
            width: 1,
            buckets: vec![(0.0, 0); WIDTH],
        }
    }

    /// Adds a sample; NaN and infinities are left out, as are samples before the first.
    pub fn add(&mut self, time: i64, y: f64) {
        if !y.is_finite() || time < self.start {
            return;
        }
        let offset = time.abs_diff(self.start);
        while offset / self.width >= WIDTH as u64 {
            for i in 0..WIDTH / 2 {
                let (a, b) = (self.buckets[2 * i], self.buckets[2 * i + 1]);
                self.buckets[i] = (a.0 + b.0, a.1 + b.1);
            }
            for b in &mut self.buckets[WIDTH / 2..] {
                *b = (0.0, 0);
            }
            self.width = self.width.saturating_mul(2);
        }
        let b = &mut self.buckets[(offset / self.width) as usize];
        b.0 += y;
        b.1 += 1;
    }

    /// The mean of each bucket as a block from ▁ (the smallest mean) to █ (the largest), a
    /// space for a bucket without samples; up to the last bucket with samples. Empty when
    /// there is no sample.
    pub fn render(&self) -> String {
        let used = self
            .buckets
            .iter()
            .rposition(|b| b.1 > 0)
            .map_or(0, |i| i + 1);
        let means: Vec<Option<f64>> = self.buckets[..used]
            .iter()
            .map(|&(sum, n)| (n > 0).then(|| sum / n as f64))
            .collect();
        let (lo, hi) = means
            .iter()
            .flatten()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &m| {
                (a.min(m), b.max(m))
            });
        means
            .iter()
            .map(|m| match m {
                None => ' ',
                Some(_) if hi <= lo => LEVELS[3],
                Some(m) => {
                    let level = ((m - lo) / (hi - lo) * (LEVELS.len() - 1) as f64).round();
                    LEVELS[(level as usize).min(LEVELS.len() - 1)]
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ramp_climbs_from_the_lowest_block_to_the_highest() {
        let mut s = Sparkline::new(0);
        for i in 0..1000 {
            s.add(i * 1_000_000, i as f64);
        }
        let line = s.render();
        let n = line.chars().count();
        assert!((WIDTH / 2..=WIDTH).contains(&n), "{line}");
        assert_eq!(line.chars().next(), Some('▁'));
        assert_eq!(line.chars().last(), Some('█'));
        let levels: Vec<usize> = line
            .chars()
            .map(|c| LEVELS.iter().position(|l| *l == c).unwrap())
            .collect();
        assert!(levels.windows(2).all(|w| w[0] <= w[1]), "{line}");
    }

    #[test]
    fn gaps_and_flat_lines_and_nothing() {
        let mut s = Sparkline::new(0);
        s.add(0, 1.0);
        s.add(31, 1.0);
        assert_eq!(s.render(), format!("▄{}▄", " ".repeat(30)));
        let mut s = Sparkline::new(0);
        s.add(0, f64::NAN);
        assert_eq!(s.render(), "");
    }
}

//! `/time` as it streams by: the §B6 time rules (non-finite or decreasing: error; equal:
//! warning) and the step statistics `inspect` shows (min, max, mean, irregular steps).

use serde_json::{json, Value as Json};

use super::codes;
use crate::report::{Finding, Severity};

/// Steps kept to find the reference step (their median) before counting irregular ones.
const REFERENCE_STEPS: usize = 1001;
/// A step is irregular when it differs from the reference by more than this, relatively.
const IRREGULAR: f64 = 1e-9;

#[derive(Debug, Default)]
pub struct Timeline {
    previous: Option<f64>,
    pub first: Option<f64>,
    pub last: Option<f64>,
    steps: u64,
    min: f64,
    max: f64,
    sum: f64,
    /// The first steps, until the reference is known.
    early: Vec<f64>,
    reference: Option<f64>,
    irregular: u64,
}

impl Timeline {
    /// Checks the time of frame `frame`; a finding when it breaks a rule.
    pub fn observe(&mut self, frame: u64, t: f64) -> Option<Finding> {
        if !t.is_finite() {
            return Some(at_frame(
                Finding::new(
                    Severity::Error,
                    codes::TIME,
                    format!("frame {frame}: the time is {t}, not a finite number of seconds"),
                ),
                frame,
            ));
        }
        self.first.get_or_insert(t);
        self.last = Some(t);
        let previous = self.previous.replace(t)?;
        let step = t - previous;
        self.step(step);
        if t < previous {
            Some(at_frame(
                Finding::new(
                    Severity::Error,
                    codes::TIME,
                    format!("frame {frame}: the time goes back from {previous} s to {t} s"),
                ),
                frame,
            ))
        } else if t == previous {
            Some(at_frame(
                Finding::new(
                    Severity::Warning,
                    codes::TIME,
                    format!("frame {frame}: the time {t} s repeats the previous frame's"),
                ),
                frame,
            ))
        } else {
            None
        }
    }

    fn step(&mut self, step: f64) {
        if self.steps == 0 {
            self.min = step;
            self.max = step;
        }
        self.steps += 1;
        self.min = self.min.min(step);
        self.max = self.max.max(step);
        self.sum += step;
        match self.reference {
            Some(r) => self.irregular += u64::from(irregular(step, r)),
            None => {
                self.early.push(step);
                if self.early.len() == REFERENCE_STEPS {
                    self.settle();
                }
            }
        }
    }

    /// Fixes the reference step as the median of the steps seen so far.
    fn settle(&mut self) {
        if self.reference.is_some() || self.early.is_empty() {
            return;
        }
        let mut sorted = std::mem::take(&mut self.early);
        sorted.sort_by(f64::total_cmp);
        let r = sorted[sorted.len() / 2];
        self.irregular += sorted.iter().filter(|s| irregular(**s, r)).count() as u64;
        self.reference = Some(r);
    }

    /// Step statistics, for `inspect` (null without two frames).
    pub fn summary(&self) -> Json {
        if self.steps == 0 {
            return Json::Null;
        }
        let (reference, irregular) = match self.reference {
            Some(r) => (r, self.irregular),
            None => {
                let mut settled = Timeline {
                    early: self.early.clone(),
                    ..Timeline::default()
                };
                settled.settle();
                (settled.reference.unwrap_or(0.0), settled.irregular)
            }
        };
        json!({
            "min": self.min,
            "max": self.max,
            "mean": self.sum / self.steps as f64,
            "reference": reference,
            "irregular": irregular,
        })
    }
}

fn irregular(step: f64, reference: f64) -> bool {
    (step - reference).abs() > IRREGULAR * reference.abs()
}

/// A finding about frame `frame` (its record index in the file's frames).
pub fn at_frame(mut finding: Finding, frame: u64) -> Finding {
    finding.record = Some(frame);
    finding
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_is_a_warning_and_backwards_or_nan_an_error() {
        let mut t = Timeline::default();
        assert_eq!(t.observe(0, 0.01), None);
        assert_eq!(t.observe(1, 0.02), None);
        let equal = t.observe(2, 0.02).unwrap();
        assert_eq!((equal.severity, equal.record), (Severity::Warning, Some(2)));
        let back = t.observe(3, 0.015).unwrap();
        assert_eq!((back.severity, back.code), (Severity::Error, codes::TIME));
        assert_eq!(t.observe(4, f64::NAN).unwrap().severity, Severity::Error);
        let s = t.summary();
        assert_eq!(s["min"], json!(0.015 - 0.02));
        assert_eq!(s["max"], json!(0.02 - 0.01));
    }

    #[test]
    fn icarus_steps_are_regular_to_the_last_bit_of_rounding() {
        let mut t = Timeline::default();
        for i in 0..3000u64 {
            assert_eq!(t.observe(i, (i + 1) as f64 * 0.01), None);
        }
        // A dropped frame: one step of 0.02.
        assert_eq!(t.observe(3000, 30.02), None);
        let s = t.summary();
        assert_eq!(s["irregular"], json!(1));
        assert!((s["reference"].as_f64().unwrap() - 0.01).abs() < 1e-15);
    }
}

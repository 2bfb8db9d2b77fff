//! Frame numbers as `#N` and `--frames A..B` mean them: the 0-based position of a frame in
//! the recording, not the frame index a format stores (NanoVer's `frame.index` restarts at
//! every reset; a 3es capture stores none).

use crate::model::{Nanos, Record};

/// Numbers frames as records pass: a record that carries a frame value starts a frame,
/// except that consecutive records with the same frame value and time are one frame (a
/// tick of a format with a record per entity or per archetype, such as Elodin).
#[derive(Debug, Clone, Default)]
pub struct FrameCounter {
    previous: Option<(u64, Nanos)>,
    frames: u64,
}

impl FrameCounter {
    /// The position of the frame `record` belongs to, if it carries a frame value.
    pub fn observe(&mut self, record: &Record) -> Option<u64> {
        let frame = record.frame?;
        if self.previous != Some((frame, record.time)) {
            self.previous = Some((frame, record.time));
            self.frames += 1;
        }
        Some(self.frames - 1)
    }

    /// Frames seen so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_of_one_tick_are_one_frame_and_frame_values_do_not_matter() {
        let mut c = FrameCounter::default();
        let r = |frame: Option<u64>, time| {
            let mut r = Record::new(time, 0);
            r.frame = frame;
            r
        };
        let seen: Vec<Option<u64>> = [
            r(Some(2), 0),
            r(None, 0),
            r(Some(3), 10),
            r(Some(3), 10),
            r(Some(0), 20),
            r(Some(0), 30),
        ]
        .iter()
        .map(|x| c.observe(x))
        .collect();
        assert_eq!(seen, [Some(0), None, Some(1), Some(1), Some(2), Some(3)]);
        assert_eq!(c.frames(), 4);
    }
}

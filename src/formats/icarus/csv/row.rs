//! What a data row's line says on its own, before the checks that need the rows before it
//! (time order, `reader.rs`): its number of cells, its time cell read, and its values parsed
//! into a frame's block with the cells that need a word. Stateless, so the read by blocks
//! (`blocks.rs`) runs it on other threads.

use super::cells::{self, NotANumber};

/// A line read on its own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Parsed {
    /// Longer than any row could be (this many bytes): not kept.
    TooLong(u64),
    /// This many cells where the header has another number.
    Cells(usize),
    /// The right number of cells; the time cell ends at `time_end`.
    Row {
        time_end: usize,
        time: Result<f64, NotANumber>,
    },
}

/// A value cell that needs a word: not a number (read as NaN), or (`deep`) not finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Note {
    pub column: usize,
    /// The cell's bytes in the line.
    pub start: usize,
    pub end: usize,
    /// What it was read as (NaN when it is not a number).
    pub value: f64,
    pub bad: bool,
}

/// How the values of a row are read.
#[derive(Debug, Clone, Copy)]
pub struct RowShape {
    /// Cells a row has: time and one per signal.
    pub width: usize,
    /// Whether values are parsed at all (a read without values checks times only).
    pub decode: bool,
    /// Whether non-finite values are noted (`--deep`).
    pub deep: bool,
}

impl RowShape {
    /// Reads `line`: when it has the right number of cells and values are decoded, every
    /// value cell into `values` (a little-endian double per column; a cell that is not a
    /// number as NaN), noting the cells that need a word in `notes`, in column order.
    pub fn parse(&self, line: &[u8], values: &mut [u8], notes: &mut Vec<Note>) -> Parsed {
        let cells = memchr::memchr_iter(b',', line).count() + 1;
        if cells != self.width {
            return Parsed::Cells(cells);
        }
        let time_end = memchr::memchr(b',', line).unwrap_or(line.len());
        let time = cells::parse(&line[..time_end]);
        if self.decode {
            self.values(line, time_end, values, notes);
        }
        Parsed::Row { time_end, time }
    }

    fn values(&self, line: &[u8], time_end: usize, values: &mut [u8], notes: &mut Vec<Note>) {
        let mut start = time_end + 1;
        for (column, slot) in values.chunks_exact_mut(8).enumerate() {
            let (parsed, length) = cells::parse_first(&line[start..]);
            let end = start + length;
            let bad = parsed.is_err();
            let value = parsed.unwrap_or(f64::NAN);
            if bad || (self.deep && !value.is_finite()) {
                notes.push(Note {
                    column,
                    start,
                    end,
                    value,
                    bad,
                });
            }
            slot.copy_from_slice(&value.to_le_bytes());
            start = end + 1;
        }
    }
}

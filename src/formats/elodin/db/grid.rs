//! Whether a DB's components share one time grid, as Elodin writes them (every component
//! of a tick stamped alike): then the merge by time serves them tick by tick, in channel
//! order, and a tick can be read as one (`frame_read.rs`, and `validate` in `reader.rs`).

use std::fs::File;

use super::dir::{read_at, Catalogue, Component};

/// Bytes of each index compared at once.
const GRID_BLOCK: usize = 64 << 10;

/// Whether every component has the same rows stamped at the same times, each after the one
/// before (so the merge by time serves them tick by tick in channel order), and the DB has
/// no message log. An index that cannot be read says no: the record read reports it.
pub fn one_grid(catalogue: &Catalogue) -> bool {
    let Some((first, rest)) = catalogue.components.split_first() else {
        return false;
    };
    let same = |c: &Component| c.rows == first.rows && c.row_size > 0;
    if !catalogue.msgs.is_empty() || first.rows == 0 || !catalogue.components.iter().all(same) {
        return false;
    }
    let files: Option<Vec<File>> = (catalogue.components.iter())
        .map(|c| File::open(&c.index.path).ok())
        .collect();
    let Some(mut files) = files else {
        return false;
    };
    let (mut block, mut other) = (vec![0u8; GRID_BLOCK], vec![0u8; GRID_BLOCK]);
    let bytes = first.rows.saturating_mul(8);
    let mut last = i64::MIN;
    let mut at = 0u64;
    while at < bytes {
        let n = (bytes - at).min(GRID_BLOCK as u64) as usize;
        let (block, other) = (&mut block[..n], &mut other[..n]);
        if read_at(&mut files[0], first.index.start() + at, block).is_err() {
            return false;
        }
        for entry in block.chunks_exact(8) {
            let t = i64::from_le_bytes(entry.try_into().unwrap_or_default());
            if t <= last {
                return false;
            }
            last = t;
        }
        for (c, file) in rest.iter().zip(&mut files[1..]) {
            if read_at(file, c.index.start() + at, other).is_err() || other != block {
                return false;
            }
        }
        at += n as u64;
    }
    true
}

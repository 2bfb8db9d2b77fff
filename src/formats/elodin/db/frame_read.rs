//! A DB read a tick at a time (`Frames::open_frames`) when its components share one time
//! grid, as Elodin writes them (every component of a tick stamped alike): a frame is a
//! tick, its values every component's row of it in channel order, so a conversion into a
//! writer of frames builds no record per row. Whether the DB is one grid is known before the
//! first frame (every index compared with the first, block by block), so a frame read never
//! meets what only records could say; any other DB (two rates, a torn tick, message logs)
//! is read as records.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use super::dir::{read_at, Catalogue};
use super::reader::DbReader;
use crate::formats::frames::{Frame, FrameLayout, FrameSignal, FrameSource, Packed};
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::{ChannelId, Entity};

/// Bytes of each index compared at once.
const GRID_BLOCK: usize = 64 << 10;

pub struct DbFrames {
    reader: DbReader,
    layout: FrameLayout,
    values: Vec<u8>,
}

impl DbFrames {
    /// `path` read by ticks, or `None` when its record read is not one record per
    /// component and tick in channel order (not one grid), when the read is lenient (a
    /// row that cannot be read is then a record without values), or without values or
    /// for the checks only (`inspect` and `validate` read the catalogue and records).
    pub fn open(path: &Path, options: ReadOptions) -> Option<Result<DbFrames, ReadError>> {
        if !options.decode || options.check_only || options.lenient {
            return None;
        }
        let reader = match DbReader::open(path, options) {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        if !one_grid(reader.catalogue()) {
            return None;
        }
        let layout = layout(reader.catalogue());
        Some(Ok(DbFrames {
            reader,
            layout,
            values: Vec::new(),
        }))
    }
}

/// Whether every component has the same rows stamped at the same times, each after the one
/// before (so the merge by time serves them tick by tick in channel order), and the DB has
/// no message log. An index that cannot be read says no: the record read reports it.
fn one_grid(catalogue: &Catalogue) -> bool {
    let Some((first, rest)) = catalogue.components.split_first() else {
        return false;
    };
    let same = |c: &super::dir::Component| c.rows == first.rows && c.row_size > 0;
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

/// A dynamic signal per component, its row at its place among the tick's rows.
fn layout(catalogue: &Catalogue) -> FrameLayout {
    let mut offset = 0;
    let dynamics = (catalogue.components.iter().enumerate())
        .map(|(ch, c)| {
            let signal = FrameSignal {
                channel: ch as ChannelId,
                entity: c.entity.as_deref().map(|e| Entity::Name(Arc::from(e))),
                packed: Packed {
                    dtype: c.schema.prim.dtype(),
                    shape: c.schema.shape.iter().map(|&d| d as usize).collect(),
                    column_major: false,
                },
                offset,
            };
            offset += c.row_size;
            signal
        })
        .collect();
    FrameLayout {
        statics: Vec::new(),
        dynamics,
        static_block: Vec::new(),
        ordered: true,
        // Its records carry no frame value, and a scalar component's an array of shape [].
        loose: true,
    }
}

impl FrameSource for DbFrames {
    fn records(&self) -> &dyn Source {
        &self.reader
    }

    fn layout(&self) -> &FrameLayout {
        &self.layout
    }

    fn next_frame(&mut self) -> Result<Option<Frame<'_>>, ReadError> {
        let time = self.reader.next_tick(&mut self.values)?;
        Ok(time.map(|time| Frame {
            time,
            exact_seconds: None,
            values: &self.values,
        }))
    }
}

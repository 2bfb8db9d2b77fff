//! A DB read a tick at a time (`Frames::open_frames`) when its components share one time
//! grid, as Elodin writes them (every component of a tick stamped alike): a frame is a
//! tick, its values every component's row of it in channel order, so a conversion into a
//! writer of frames builds no record per row. Whether the DB is one grid is known before the
//! first frame (every index compared with the first, block by block), so a frame read never
//! meets what only records could say; any other DB (two rates, a torn tick, message logs)
//! is read as records.

use std::path::Path;
use std::sync::Arc;

use super::dir::Catalogue;
use super::grid::one_grid;
use super::reader::DbReader;
use crate::formats::frames::{Frame, FrameLayout, FrameSignal, FrameSource, Packed};
use crate::formats::{ReadError, ReadOptions, Source};
use crate::model::{ChannelId, Entity};

pub struct DbFrames {
    reader: DbReader,
    layout: FrameLayout,
    values: Vec<u8>,
}

impl DbFrames {
    /// `path` read by ticks, or `None` when its record read is not one record per
    /// component and tick in channel order (not one grid), or without values or for the
    /// checks only (`inspect` reads the catalogue, `validate` a tick at a time as records).
    pub fn open(path: &Path, options: ReadOptions) -> Option<Result<DbFrames, ReadError>> {
        if !options.decode || options.check_only {
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

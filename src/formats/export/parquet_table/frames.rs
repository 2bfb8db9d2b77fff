//! The table written a frame at a time (`Frames::create_frames`): each frame's values go from
//! its block straight into their columns, a row per signal, instead of through a record per
//! signal (an Icarus frame of 200 doubles is 200 records, and building, selecting and
//! copying them cost more than encoding the rows).
//!
//! What it writes is what [`TableWriter`](super::TableWriter) writes for the same recording
//! read as records (the rows, in the same order: the static signals at the first frame,
//! then each frame's signals; the same layout, batches and metadata), and what it reports.
//! It takes a layout only when every value goes into its column exactly as its record's
//! would, with nothing to count; otherwise (a float32 signal sharing a float64 column, a
//! dataset of one file per channel) the pipeline writes records.

use std::path::{Path, PathBuf};

use super::table::{PackedRows, Table};
use super::writer::{add_tally, key_types, metadata};
use super::TableWriteOptions;
use crate::formats::frames::{Frame, FrameLayout, FrameSignal, FrameSink};
use crate::formats::output::{names_directory, Outputs};
use crate::formats::{WriteError, WriteReport};
use crate::model::{Composition, Header};

/// Every signal of `layout` bound to its column in `table` (laid out for `header`'s
/// channels), when each goes there exactly ([`Table::packed_column`]): one signal per
/// channel, the channel's one field.
fn bind(
    table: &mut Table,
    header: &Header,
    layout: &FrameLayout,
) -> Option<(PackedRows, PackedRows)> {
    let mut seen = vec![false; header.channels.len()];
    let mut bind_all = |signals: &[FrameSignal]| -> Option<PackedRows> {
        let mut rows = PackedRows::new();
        for s in signals {
            let c = s.channel as usize;
            let field = s.field(header)?;
            if std::mem::replace(seen.get_mut(c)?, true) {
                return None;
            }
            let column = table.packed_column(c, &field.name, &s.packed)?;
            rows.add(c, s.entity.clone(), column, s.packed.clone(), s.offset);
        }
        Some(rows)
    };
    let statics = bind_all(&layout.statics)?;
    let dynamics = bind_all(&layout.dynamics)?;
    Some((statics, dynamics))
}

/// A table laid out for `header`'s channels, as [`TableWriter::single`](super::TableWriter)
/// lays it out.
fn table(file: PathBuf, shown: &Path, header: &Header, outputs: &Outputs) -> Table {
    let mut table = Table::new(file, shown.to_path_buf(), metadata(header, outputs))
        .with_key_types(key_types(header));
    for channel in &header.channels {
        table.add_channel(channel);
    }
    table
}

pub struct TableFrames {
    table: Table,
    statics: PackedRows,
    dynamics: PackedRows,
    static_block: Vec<u8>,
    /// Frames written.
    frames: u64,
}

impl TableFrames {
    /// `None` (and nothing created) when the layout's values do not all go into their
    /// columns exactly, or the output is not one file.
    pub fn create(
        target: &Path,
        header: &Header,
        layout: &FrameLayout,
        outputs: &mut Outputs,
        options: TableWriteOptions,
    ) -> Option<Result<TableFrames, WriteError>> {
        let delta = |c: &crate::model::Channel| {
            matches!(
                c.composition,
                Composition::FrameDelta | Composition::StateDelta
            )
        };
        let folds = options.fold && header.channels.iter().any(delta);
        if names_directory(target) || folds {
            return None;
        }
        // Bound first on a table of no file: nothing is created unless it binds.
        bind(
            &mut table(PathBuf::new(), target, header, outputs),
            header,
            layout,
        )?;
        let file = match outputs.create_path(target) {
            Ok(f) => f,
            Err(e) => return Some(Err(e)),
        };
        let mut table = table(file, target, header, outputs);
        let (statics, dynamics) = bind(&mut table, header, layout)?;
        Some(Ok(TableFrames {
            table,
            statics,
            dynamics,
            static_block: layout.static_block.clone(),
            frames: 0,
        }))
    }
}

impl FrameSink for TableFrames {
    fn write_frame(&mut self, frame: &Frame<'_>) -> Result<(), WriteError> {
        let n = i64::try_from(self.frames).unwrap_or(i64::MAX);
        if self.frames == 0 {
            let statics = &self.statics;
            (self.table).push_packed(statics, frame.time, 0, &self.static_block)?;
        }
        (self.table).push_packed(&self.dynamics, frame.time, n, frame.values)?;
        self.frames += 1;
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<WriteReport, WriteError> {
        let mut report = WriteReport::default();
        let (rows, tally, names) = self.table.close()?;
        report.records = rows;
        add_tally(&mut report, tally, &names);
        Ok(report)
    }
}

//! A file read a frame at a time (`Frames::open_frames`): each row's values parsed straight
//! into one block, with the record read's checks, so a conversion into a writer that takes
//! frames (the Parquet table, MCAP, the lake, the Elodin DB, HDF5) does not build a record per
//! cell.

use std::path::Path;

use super::reader::CsvReader;
use crate::formats::frames::{Frame, FrameLayout, FrameSource};
use crate::formats::{ReadError, ReadOptions, Source};

pub struct CsvFrames {
    reader: CsvReader,
    layout: FrameLayout,
}

impl CsvFrames {
    /// `path` read by frames, or `None` for a file of no columns (see
    /// `CsvReader::frame_layout`).
    pub fn open(path: &Path, options: ReadOptions) -> Option<Result<CsvFrames, ReadError>> {
        let reader = match CsvReader::open(path, options) {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        let layout = reader.frame_layout()?;
        Some(Ok(CsvFrames { reader, layout }))
    }
}

impl FrameSource for CsvFrames {
    fn records(&self) -> &dyn Source {
        &self.reader
    }

    fn layout(&self) -> &FrameLayout {
        &self.layout
    }

    fn next_frame(&mut self) -> Result<Option<Frame<'_>>, ReadError> {
        let next = self.reader.next_frame()?;
        Ok(next.map(|(seconds, time)| Frame {
            time,
            exact_seconds: Some(seconds),
            values: self.reader.frame_values(),
        }))
    }

    /// A damaged row skipped in a lenient read leaves a gap in the records' frame values
    /// (the rows' indices), which frames, counted from 0, do not have.
    fn numbered(&self) -> bool {
        self.reader.no_row_skipped()
    }
}

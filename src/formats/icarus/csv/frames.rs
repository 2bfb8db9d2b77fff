//! A file read a frame at a time (`Frames::open_frames`): each row's values parsed straight
//! into one block, with the record read's checks, so a conversion into a writer that takes
//! frames (the Parquet table, MCAP, the lake, the Elodin DB, HDF5) does not build a record per
//! cell. The rows are parsed on other threads, in blocks of lines (`blocks.rs`).

use std::path::Path;

use super::blocks::Blocks;
use super::reader::CsvReader;
use crate::formats::frames::{Frame, FrameLayout, FrameSource};
use crate::formats::{ReadError, ReadOptions, Source};

pub struct CsvFrames {
    reader: CsvReader,
    layout: FrameLayout,
    blocks: Blocks,
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
        Some(Blocks::start(&reader, path).map(|blocks| CsvFrames {
            reader,
            layout,
            blocks,
        }))
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
        if !self.blocks.advance(&mut self.reader)? {
            return Ok(None);
        }
        let (seconds, time) = self.reader.frame_time();
        Ok(Some(Frame {
            time,
            exact_seconds: Some(seconds),
            values: self.blocks.values(),
        }))
    }

    /// A damaged row skipped in a lenient read leaves a gap in the records' frame values
    /// (the rows' indices), which frames, counted from 0, do not have.
    fn numbered(&self) -> bool {
        self.reader.no_row_skipped()
    }
}

//! A file read a frame at a time (`Frames::open_frames`): each frame's value of every signal
//! packed into one block from the windows the record read reads, with the record read's
//! checks, so a conversion into a writer that takes frames (the Parquet table, HDF5) does
//! not build a record per signal and frame.

use std::path::Path;

use super::reader::IcarusH5Reader;
use crate::formats::frames::{Frame, FrameLayout, FrameSource};
use crate::formats::{ReadError, ReadOptions, Source};

pub struct IcarusH5Frames {
    reader: IcarusH5Reader,
    layout: FrameLayout,
    block: Vec<u8>,
}

impl IcarusH5Frames {
    /// `path` read by frames, or `None` when its record read gives something frames do not
    /// say (see `IcarusH5Reader::frame_layout`).
    pub fn open(path: &Path, options: ReadOptions) -> Option<Result<IcarusH5Frames, ReadError>> {
        let reader = match IcarusH5Reader::open(path, options) {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        let layout = reader.frame_layout()?;
        Some(Ok(IcarusH5Frames {
            reader,
            layout,
            block: Vec::new(),
        }))
    }
}

impl FrameSource for IcarusH5Frames {
    fn records(&self) -> &dyn Source {
        &self.reader
    }

    fn layout(&self) -> &FrameLayout {
        &self.layout
    }

    fn next_frame(&mut self) -> Result<Option<Frame<'_>>, ReadError> {
        Ok(self
            .reader
            .next_frame(&mut self.block)?
            .map(|(seconds, time)| Frame {
                time,
                exact_seconds: Some(seconds),
                values: &self.block,
            }))
    }
}

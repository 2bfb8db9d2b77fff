//! A recording read a frame at a time (`Frames::open_frames`): each frame's dynamic block is
//! lent as it is in the file, with the record read's checks, so a conversion into a writer
//! that takes frames (HDF5, the Parquet table) does not build a record per signal and frame.

use std::path::Path;

use super::reader::IcarecReader;
use crate::formats::frames::{Frame, FrameLayout, FrameSource};
use crate::formats::{ReadError, ReadOptions, Source};

pub struct IcarecFrames {
    reader: IcarecReader,
    layout: FrameLayout,
}

impl IcarecFrames {
    /// `path` read by frames, or `None` when its record read gives something frames do not
    /// say (see `IcarecReader::frame_layout`).
    pub fn open(path: &Path, options: ReadOptions) -> Option<Result<IcarecFrames, ReadError>> {
        let reader = match IcarecReader::open(path, options) {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        let layout = reader.frame_layout()?;
        Some(Ok(IcarecFrames { reader, layout }))
    }
}

impl FrameSource for IcarecFrames {
    fn records(&self) -> &dyn Source {
        &self.reader
    }

    fn layout(&self) -> &FrameLayout {
        &self.layout
    }

    fn next_frame(&mut self) -> Result<Option<Frame<'_>>, ReadError> {
        self.reader.next_frame()
    }
}

//! The pipeline through the library: the model's stages, slicing, the frame paths.

pub(crate) mod db_frames;
mod icarus_frames;
mod lake_frames;
pub(crate) mod mcap_frames;
mod model;
pub(crate) mod parquet_frames;
mod slice_fold;

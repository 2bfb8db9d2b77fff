//! The pipeline through the library: the model's stages, slicing, the frame paths.

mod db_frames;
mod icarus_frames;
mod lake_frames;
mod mcap_frames;
mod model;
mod parquet_frames;
mod slice_fold;

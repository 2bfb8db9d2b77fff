//! Stable finding codes of Icarus HDF5 files (spec icarec.md §B6).

/// No HDF5 signature, or the library cannot open the file.
pub const NOT_HDF5: &str = "ICARUS_H5_NOT_HDF5";
/// No `/time` dataset, or not 1-D float64.
pub const NO_TIME: &str = "ICARUS_H5_NO_TIME";
/// No `/signals` group.
pub const NO_SIGNALS: &str = "ICARUS_H5_NO_SIGNALS";
/// A signal dataset whose length differs from `/time`.
pub const LENGTH: &str = "ICARUS_H5_LENGTH";
/// A signal dataset that is not 1-D float64, float32, int32 or int64.
pub const DTYPE: &str = "ICARUS_H5_DTYPE";
/// `/metadata` `schema` missing or unparsable (strict and lenient): datasets used instead.
pub const SCHEMA: &str = "ICARUS_H5_SCHEMA";
/// The schema lists signals absent from `/signals`, or types differing from the datasets.
pub const SCHEMA_MISMATCH: &str = "ICARUS_H5_SCHEMA_MISMATCH";
/// Non-finite or decreasing times (equal times: a warning under the same code).
pub const TIME: &str = "ICARUS_H5_TIME";
/// No time system or epoch is recorded (always, for real Icarus files).
pub const NO_EPOCH: &str = "ICARUS_H5_NO_EPOCH";
/// simrec's own: `/metadata` `time_epoch` is not an ISO-8601 UTC instant (ignored).
pub const EPOCH: &str = "ICARUS_H5_EPOCH";
/// NaN or infinity in a float signal (`validate --deep`).
pub const NONFINITE: &str = "ICARUS_H5_NONFINITE";
/// simrec's own: a dataset's storage does not fit the file (a chunk or a contiguous block
/// past the end, a chunk index the library cannot walk, rows without a stored chunk), so its
/// values cannot be read as the header claims.
pub const STORAGE: &str = "ICARUS_H5_STORAGE";

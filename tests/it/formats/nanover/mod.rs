//! The NanoVer family: the legacy `.traj`/`.state` pair and `.nanover.zip`.

mod cli_zip;
mod legacy_broken;
mod legacy_fuzz_regressions;
mod legacy_prost_crosscheck;
mod legacy_truncation;
mod legacy_upstream;
mod zip;
mod zip_alloc;
mod zip_index;
mod zip_split_upstream;
mod zip_truncation;

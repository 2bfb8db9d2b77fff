//! The Icarus family: `.icarec`, Icarus HDF5 and CSV, compatibility and warm-start snapshots.

mod cli_compat;
mod cli_csv;
mod cli_hdf5;
mod cli_icarec;
mod cli_icarec_merge;
mod cli_snapshot;
mod csv;
mod csv_alloc;
mod csv_blocks;
mod csv_frames;
mod csv_g15;
mod hdf5;
mod hdf5_damage;
mod icarec;
mod icarec_truncation;
mod snapshot_frame;

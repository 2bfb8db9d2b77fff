//! Helpers shared by the tests, each kept once: where fixtures are, running the built
//! binary, JSON Lines, hand-framed NanoVer files, byte comparisons, read options, the
//! counting allocator, the Elodin, in-memory source and prost helpers, and the JSON Schema
//! validator of the contract tests.

pub mod alloc;
pub mod bytes;
pub mod elodin;
pub mod fixtures;
pub mod json;
pub mod listed;
pub mod nanover;
pub mod options;
pub mod prost_model;
pub mod run;
pub mod schema;

// The helpers nearly every command test takes, reachable as `util::run_in` and the like.
pub use bytes::{assert_file_bytes, assert_same_bytes};
pub use fixtures::{
    any_fixture, any_fixture_bytes, copy_tree, dir_entries, files_under, fixture, fixture_bytes,
    icarec_with_partial_last_frame, lab, s,
};
pub use json::{
    channel, channel_counts, fold, frame, keys, numbers, parse_json_lines, read_jsonl, removed,
    small_pair_jsonl, time_ns, values_map,
};
pub use nanover::{
    assert_same_records, nanover_zip_archive, raw_records, raw_records_of, RawRecord,
};
pub use options::{lenient, read_options};
pub use run::{
    cat_json, convert_fixture, frame_and_record_runs, inspect_counts, run, run_in, run_with_stdin,
    simrec, Run,
};

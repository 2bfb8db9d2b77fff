//! Byte-for-byte comparisons that report where two byte strings part, not the bytes.

use std::path::Path;

/// Asserts two byte strings are equal without dumping them: reports lengths and the first
/// differing offset.
#[track_caller]
pub fn assert_same_bytes(got: &[u8], want: &[u8], what: &str) {
    if got != want {
        let at = got
            .iter()
            .zip(want)
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        panic!(
            "{what}: bytes differ (got {} bytes, want {}; first difference at byte {at})",
            got.len(),
            want.len()
        );
    }
}

/// Asserts the file at `path` holds exactly `want`.
#[track_caller]
pub fn assert_file_bytes(path: &Path, want: &[u8]) {
    let got = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_same_bytes(&got, want, &path.display().to_string());
}

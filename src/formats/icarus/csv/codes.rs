//! Stable finding codes of Icarus CSV files (spec §C3, and simrec's additions).

/// The header line does not start with the cell `time`.
pub const HEADER: &str = "ICARUS_CSV_HEADER";
/// A row whose cell count differs from the header's.
pub const COLUMNS: &str = "ICARUS_CSV_COLUMNS";
/// A cell that is neither empty nor a number.
pub const VALUE: &str = "ICARUS_CSV_VALUE";
/// A time cell that is empty, not a number, not finite or out of range, or a time lower
/// than the previous row's.
pub const TIME: &str = "ICARUS_CSV_TIME";
/// A time equal to the previous row's.
pub const TIME_EQUAL: &str = "ICARUS_CSV_TIME_EQUAL";
/// simrec: a line longer than any row of the header's width could be (it is skipped
/// unread, so a file without line breaks cannot fill memory).
pub const LINE_LENGTH: &str = "ICARUS_CSV_LINE_LENGTH";
/// simrec: two columns with the same name (the second is a channel of the same name).
pub const DUPLICATE_COLUMN: &str = "ICARUS_CSV_DUPLICATE_COLUMN";
/// simrec, `--deep`: NaN or infinities in a column (one finding per column, with counts).
pub const NONFINITE: &str = "ICARUS_CSV_NONFINITE";

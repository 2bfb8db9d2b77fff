//! Icarus's CSV export (spec `icarec.md` Part C): `time` and one column per scalar signal,
//! every value a double printed as C's `%.15g`. Read and written; docs/formats/icarus-csv.md.

mod blocks;
pub mod cells;
mod checks;
pub mod codes;
mod frames;
pub mod g15;
mod lines;
pub mod names;
mod reader;
mod row;
mod writer;

use std::path::Path;

pub use g15::{push_g15, survives, G15};
pub use reader::{CsvReader, FORMAT};
pub use writer::{CsvStyle, CsvWriteOptions, CsvWriter, STYLES};

/// `--csv-style`.
const STYLE: WriteOption = WriteOption {
    flag: "csv-style",
    help: "What a CSV output of no frames holds: the header line (icarus), or nothing, as Icarus writes it (icarus-strict)",
    aliases: &[],
    values: STYLES,
    default: None,
};

impl CsvWriteOptions {
    /// The options the flags given ask for.
    pub fn from_flags(flags: &GivenFlags) -> Result<CsvWriteOptions, OptionError> {
        let styles = [
            ("icarus", CsvStyle::Icarus),
            ("icarus-strict", CsvStyle::IcarusStrict),
        ];
        Ok(CsvWriteOptions {
            style: flags
                .choice(&STYLE, "icarus-csv", &styles)?
                .unwrap_or_default(),
            time: TimeColumn::from_flags(flags, "icarus-csv")?,
        })
    }
}

use crate::formats::format::{
    Detection, Format, Frames, KeepsEpoch, TimeColumn, WriteOption, WriterTraits, TIME_OPTION,
};
use crate::formats::frames::{boxed_source, FrameSource};
use crate::formats::output::Outputs;
use crate::formats::{GivenFlags, OptionError, ReadError, ReadOptions, Sink, Source, WriteError};
use crate::model::Header;

/// Whether `head` starts with an Icarus CSV header: a text line (no NUL byte, so a tar
/// archive whose first member is named `time,…` is not one) that starts with the cell `time`
/// and a comma, or is `time` alone (a recording of no signals). A quoted `"time"` is not what
/// Icarus writes.
pub fn looks_like_csv(head: &[u8]) -> bool {
    let line = match memchr::memchr(b'\n', head) {
        Some(end) => &head[..end],
        None => head,
    };
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    (line.starts_with(b"time,") || line == b"time") && !line.contains(&0)
}

pub struct IcarusCsv;

impl Format for IcarusCsv {
    fn name(&self) -> &'static str {
        "icarus-csv"
    }

    fn title(&self) -> &'static str {
        "Icarus CSV export .csv"
    }

    fn names(&self) -> &'static [&'static str] {
        &["icarus-csv", "csv"]
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[".csv"]
    }

    fn write_options(&self) -> &'static [WriteOption] {
        &[STYLE, TIME_OPTION]
    }

    fn detect(&self, path: &Path, head: &[u8]) -> Detection {
        Detection::by(looks_like_csv(head), self.named_by(path))
    }

    fn open(&self, path: &Path, options: ReadOptions) -> Result<Box<dyn Source>, ReadError> {
        Ok(Box::new(CsvReader::open(path, options)?))
    }

    fn create(
        &self,
        target: &Path,
        header: &Header,
        outputs: &mut Outputs,
    ) -> Result<Box<dyn Sink>, WriteError> {
        let options = CsvWriteOptions::from_flags(&outputs.flags)?;
        Ok(Box::new(CsvWriter::create(
            target, header, outputs, options,
        )?))
    }

    fn writer(&self) -> WriterTraits {
        WriterTraits {
            needs_time_order: true,
            needs_schema: true,
            // Only as absolute times in the `time` column (`--time utc`).
            keeps_epoch: KeepsEpoch::AsAbsoluteTimes,
            ..WriterTraits::DEFAULT
        }
    }

    fn frames(&self) -> Option<&dyn Frames> {
        Some(self)
    }
}

impl Frames for IcarusCsv {
    /// Each row's values parsed into one block.
    fn open_frames(
        &self,
        path: &Path,
        options: ReadOptions,
    ) -> Option<Result<Box<dyn FrameSource>, ReadError>> {
        boxed_source(frames::CsvFrames::open(path, options))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_by_the_first_line_then_the_name() {
        let f = IcarusCsv;
        let p = Path::new("run.csv");
        let q = Path::new("run.dat");
        assert_eq!(f.detect(q, b"time,Rocket.x\n0.01,1\n"), Detection::Content);
        assert_eq!(f.detect(q, b"time\n0.01\n"), Detection::Content);
        assert_eq!(f.detect(p, b""), Detection::Extension);
        assert_eq!(f.detect(q, b"times,a\n"), Detection::No);
        assert_eq!(f.detect(q, b"\"time\",a\n"), Detection::No);
        let mut tar = b"time,x".to_vec();
        tar.resize(512, 0);
        tar[257..262].copy_from_slice(b"ustar");
        assert_eq!(f.detect(q, &tar), Detection::No);
    }
}

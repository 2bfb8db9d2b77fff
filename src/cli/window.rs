//! The window flags of `slice`, `convert` and `cat` (`--start`, `--end`, `--frames`,
//! `--rebase`), made into the `SliceRequest` every format's slice takes.

use super::diag::say;
use super::UsageError;
use crate::formats::SliceRequest;
use crate::model::TimeSpec;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct WindowArgs {
    /// Start of the window (inclusive), with the context it needs to play on its own: 12.5,
    /// 12.5s, 850ms, 3us, 10ns, #120, -5s
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub start: Option<TimeSpec>,
    /// End of the window (exclusive)
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub end: Option<TimeSpec>,
    /// Frames A..B (0-based, B exclusive; A.. to the end), same as --start '#A' --end '#B'
    #[arg(long, value_name = "A..B", conflicts_with_all = ["start", "end"])]
    pub frames: Option<String>,
    /// Start the window at time 0 (its absolute start moves with it, so absolute times
    /// stay); without it the recording's own times are kept
    #[arg(long)]
    pub rebase: bool,
    /// The recording's own times: the default (a window keeps them unless --rebase)
    #[arg(long, hide = true, conflicts_with = "rebase")]
    pub keep_time: bool,
}

impl WindowArgs {
    /// The window asked for, with the format's own `selectors`; `None` when neither is
    /// given. The pipeline rebases it for an output whose time cannot start anywhere but 0.
    pub fn request(
        &self,
        selectors: Vec<(String, String)>,
    ) -> Result<Option<SliceRequest>, UsageError> {
        if self.keep_time {
            say!("warning: --keep-time is the default: a window keeps the recording's times unless --rebase");
        }
        let (start, end) = match &self.frames {
            Some(f) => {
                let (a, b) = frame_range(f)?;
                (Some(a), b)
            }
            None => (self.start, self.end),
        };
        let windowed = start.is_some() || end.is_some();
        Ok((windowed || !selectors.is_empty()).then_some(SliceRequest {
            start,
            end,
            rebase: self.rebase,
            selectors,
        }))
    }
}

fn frame_range(text: &str) -> Result<(TimeSpec, Option<TimeSpec>), UsageError> {
    let bad = || {
        UsageError(format!(
            "--frames `{text}`: expected A..B or A.. with 0-based frame numbers"
        ))
    };
    let (a, b) = text.split_once("..").ok_or_else(bad)?;
    let a: u64 = a.trim().parse().map_err(|_| bad())?;
    let b = match b.trim() {
        "" => None,
        b => Some(TimeSpec::Frame(b.parse().map_err(|_| bad())?)),
    };
    Ok((TimeSpec::Frame(a), b))
}

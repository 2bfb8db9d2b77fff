//! A progress bar on long work, only when stderr is a terminal (never in pipes or CI logs)
//! and not `--quiet`.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar of `length` bytes labelled `label` (`None`: not known yet), or `None` where none is
/// shown.
fn bytes_bar(label: &str, length: Option<u64>) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() || super::diag::quiet() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(length, ProgressDrawTarget::stderr_with_hz(10));
    let style = ProgressStyle::with_template(
        "{msg} {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(label.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    Some(bar)
}

pub struct Progress(Option<ProgressBar>);

impl Progress {
    pub fn new(label: &str) -> Progress {
        Progress(bytes_bar(label, None))
    }

    pub fn update(&self, done: u64, total: u64) {
        if let Some(bar) = &self.0 {
            bar.set_length(total);
            bar.set_position(done);
        }
    }

    /// Runs `f` (which writes to stderr) with the bar out of its way.
    pub fn suspend(&self, f: impl FnOnce()) {
        match &self.0 {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

/// One bar over a batch (`convert --each`): recordings done of all, and bytes read of all
/// inputs, fed by jobs on several threads.
pub struct BatchProgress {
    bar: Option<ProgressBar>,
    label: &'static str,
    recordings: usize,
    done: AtomicUsize,
}

impl BatchProgress {
    pub fn new(label: &'static str, recordings: usize, bytes: u64) -> BatchProgress {
        BatchProgress {
            bar: bytes_bar(&format!("{label} 0/{recordings}"), Some(bytes)),
            label,
            recordings,
            done: AtomicUsize::new(0),
        }
    }

    /// The progress of one recording of `size` bytes; once dropped, the recording is done.
    pub fn job(&self, size: u64) -> JobProgress<'_> {
        JobProgress {
            batch: self,
            size,
            counted: 0,
        }
    }
}

impl Drop for BatchProgress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

pub struct JobProgress<'a> {
    batch: &'a BatchProgress,
    size: u64,
    /// Bytes of `size` added to the bar so far.
    counted: u64,
}

impl JobProgress<'_> {
    /// `done` of `total` read, as the reader counts (compressed or not): that share of the
    /// recording's size.
    pub fn update(&mut self, done: u64, total: u64) {
        let Some(bar) = &self.batch.bar else { return };
        if total == 0 {
            return;
        }
        let now = (u128::from(self.size) * u128::from(done.min(total)) / u128::from(total)) as u64;
        if now > self.counted {
            bar.inc(now - self.counted);
            self.counted = now;
        }
    }
}

impl Drop for JobProgress<'_> {
    fn drop(&mut self) {
        let Some(bar) = &self.batch.bar else { return };
        bar.inc(self.size.saturating_sub(self.counted));
        let done = self.batch.done.fetch_add(1, Ordering::Relaxed) + 1;
        bar.set_message(format!(
            "{} {done}/{}",
            self.batch.label, self.batch.recordings
        ));
    }
}

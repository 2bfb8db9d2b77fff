//! The copy loop: pull records from a source, push them into a sink.

use crate::formats::{ErrorKind, ReadError, Sink, Source, WriteError, WriteReport};

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The command line names no output, or no format simrec writes.
    #[error(transparent)]
    Request(#[from] super::request::RequestError),
    /// The output format does not take a writer flag given, or not with that value.
    #[error(transparent)]
    Option(#[from] crate::formats::OptionError),
    /// The output could not be created. The message names the path once: the error is
    /// said after it, without it.
    #[error("cannot write {}: {}", path.display(), error.after_path(path))]
    Output {
        path: std::path::PathBuf,
        error: WriteError,
    },
    /// A selection left nothing to write (why); nothing was written.
    #[error("the selection leaves nothing to write: {0}; nothing was written")]
    Empty(&'static str),
}

impl PipelineError {
    /// Whether the command line or the data is at fault (the exit code).
    pub fn kind(&self) -> ErrorKind {
        match self {
            PipelineError::Read(e) => e.kind(),
            PipelineError::Write(e) | PipelineError::Output { error: e, .. } => e.kind(),
            PipelineError::Empty(_) | PipelineError::Request(_) | PipelineError::Option(_) => {
                ErrorKind::Usage
            }
        }
    }
}

/// How often (in records) `progress` is called.
const PROGRESS_EVERY: u64 = 256;

/// Streams every record of `source` into `sink` and finishes the sink.
pub fn copy<'a>(
    source: &mut dyn Source,
    mut sink: Box<dyn Sink + 'a>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<WriteReport, PipelineError> {
    let mut n = 0u64;
    // The sink was opened with the header as it was; channels the source adds while it
    // reads are announced to the sink before their first record.
    let mut announced = source.header().channels.len();
    while let Some(record) = source.next() {
        let record = record?;
        let channels = &source.header().channels;
        for channel in channels.get(announced..).unwrap_or_default() {
            sink.add_channel(channel)?;
        }
        announced = announced.max(channels.len());
        sink.write(&record)?;
        source.recycle(record);
        n += 1;
        if n.is_multiple_of(PROGRESS_EVERY) {
            let (done, total) = source.progress();
            progress(done, total);
        }
    }
    Ok(sink.finish()?)
}

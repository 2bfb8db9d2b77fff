//! The copy loop: pull records from a source, push them into a sink.

use crate::formats::{ReadError, Sink, Source, WriteError, WriteReport};

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The output could not be created.
    #[error("cannot write {}", path.display())]
    Output {
        path: std::path::PathBuf,
        #[source]
        source: WriteError,
    },
    /// A selection left nothing to write (why); nothing was written.
    #[error("the selection leaves nothing to write: {0}; nothing was written")]
    Empty(&'static str),
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

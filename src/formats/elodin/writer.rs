//! Writing replay directories Elodin 0.10 loads (spec §6).

use std::path::Path;

use crate::formats::output::Outputs;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{Header, Record};

pub struct ElodinWriter {}

impl ElodinWriter {
    pub fn create(
        _target: &Path,
        _header: &Header,
        _outputs: &mut Outputs,
    ) -> Result<ElodinWriter, WriteError> {
        Err(WriteError::Unsupported("not yet".into()))
    }
}

impl Sink for ElodinWriter {
    fn write(&mut self, _record: &Record) -> Result<(), WriteError> {
        Ok(())
    }
    fn finish(self: Box<Self>) -> Result<WriteReport, WriteError> {
        Ok(WriteReport::default())
    }
}

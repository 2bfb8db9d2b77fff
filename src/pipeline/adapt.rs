//! A source made what a writer takes: in time order, resampled, and in the model of the
//! writer's family, through the mapping its family declares (docs/formats/mapping.md).

use crate::formats::{registry, Format, Source};

use super::ordered::InTimeOrder;
use super::resample::Resample;
use super::LossHandle;

/// `source` as the writer of `format` takes it: in time order where the writer needs it,
/// on a grid of `resample` nanoseconds when asked, and in the model of its family when the
/// writer takes that model and the source is of another family; what that changes is
/// counted in `loss`. A source of the writer's own family (or, for a writer taking every
/// channel as it is, of its own format) passes as it is (copied as recorded) unless
/// resampled.
pub fn adapt<'a>(
    source: &'a mut dyn Source,
    format: &dyn Format,
    resample: Option<i64>,
    loss: &LossHandle,
) -> Box<dyn Source + 'a> {
    let from = source.header().format.clone();
    let traits = format.writer();
    let family = registry::family_of(format).filter(|_| traits.takes_family_model);
    let own = format.names().contains(&from.as_str()) || family.is_some_and(|f| f.recorded(&from));
    let mut source: Box<dyn Source + 'a> = Box::new(source);
    if own && resample.is_none() {
        return source;
    }
    if traits.needs_time_order || resample.is_some() {
        source = Box::new(InTimeOrder::new(source, loss.clone()));
    }
    if let Some(step) = resample {
        source = Box::new(Resample::new(source, step, loss.clone()));
    }
    if own {
        return source;
    }
    match family.and_then(|f| f.mapping) {
        Some(mapping) if mapping.maps(registry::family_recorded(&from)) => {
            mapping.map(source, loss.clone())
        }
        _ => source,
    }
}

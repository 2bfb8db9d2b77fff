//! A source made what a writer takes: in time order, resampled, in the writer's family's
//! model (the mapping its family declares, docs/formats/mapping.md).

use crate::formats::elodin::mapping::ToElodin;
use crate::formats::icarus::mapping::PerEntity;
use crate::formats::nanover::mapping::ToNanover;
use crate::formats::tes::mapping::ToTes;
use crate::formats::xrec::mapping::ToXrec;
use crate::formats::{Family, Format, Source};

use super::ordered::InTimeOrder;
use super::resample::Resample;
use super::LossHandle;

/// `source` as the writer of `format` takes it: in time order where the writer needs it,
/// on a grid of `resample` nanoseconds when asked, and in the model of its family when the
/// source is of another; what that changes is counted in `loss`. A source of the format's
/// own family passes as it is (copied as recorded) unless resampled.
pub fn adapt<'a>(
    source: &'a mut dyn Source,
    format: &dyn Format,
    resample: Option<i64>,
    loss: &LossHandle,
) -> Box<dyn Source + 'a> {
    let from = source.header().format.clone();
    let own =
        format.names().contains(&from.as_str()) || format.family().is_some_and(|f| f.holds(&from));
    let mut source: Box<dyn Source + 'a> = Box::new(source);
    if own && resample.is_none() {
        return source;
    }
    if format.needs_time_order() || resample.is_some() {
        source = Box::new(InTimeOrder::new(source, loss.clone()));
    }
    if let Some(step) = resample {
        source = Box::new(Resample::new(source, step, loss.clone()));
    }
    if own {
        return source;
    }
    match format.family() {
        Some(Family::NanoVer) => Box::new(ToNanover::new(source, loss.clone())),
        Some(Family::Tes) => Box::new(ToTes::new(source, loss.clone())),
        Some(Family::Xrec) => Box::new(ToXrec::new(source, loss.clone())),
        Some(Family::Icarus) => Box::new(PerEntity::new(source, loss.clone())),
        // The Elodin writer maps other families itself; NanoVer's particles become bodies.
        Some(Family::Elodin) if Family::NanoVer.holds(&from) => {
            Box::new(ToElodin::new(source, loss.clone()))
        }
        Some(Family::Elodin) | None => source,
    }
}

//! The NanoVer family: legacy `.traj`/`.state` (`legacy/`) and `.nanover.zip` (`zip/`),
//! and how a recording of another family becomes NanoVer frames and state (`mapping.rs`).
//! This module holds what both formats share: the units of the conventional frame keys and
//! time in whole microseconds.

pub mod legacy;
pub mod mapping;
pub mod zip;

use crate::formats::{Family, KeyType};
use crate::model::{DType, FieldSpec, Record};
use crate::report::LossReport;

/// The family, as the registry lists it.
pub static FAMILY: Family = Family {
    name: "nanover",
    formats: &[&legacy::NanoverLegacy, &zip::NanoverZip],
    mapping: Some(&mapping::IntoNanover),
    key_types: KEY_TYPES,
};

/// The conventional keys whose type the two formats store differently, as every NanoVer
/// file's table types them (docs/formats/parquet.md): counts and indices as integers (a
/// `.traj` stores them as doubles); names and residue ids as lists of strings (a
/// `.nanover.zip` as msgpack lists; old recordings' residue ids are numbers); the arrays
/// of small integers in the type that holds both formats' values (a `.traj` index array
/// is uint32, a `.nanover.zip` packs them as uint8; its bond orders too, which a `.traj`
/// stores as float32).
const KEY_TYPES: &[(&str, KeyType)] = &[
    ("frame.index", KeyType::Scalar(DType::I64)),
    ("particle.count", KeyType::Scalar(DType::I64)),
    ("residue.count", KeyType::Scalar(DType::I64)),
    ("chain.count", KeyType::Scalar(DType::I64)),
    ("system.simulation.counter", KeyType::Scalar(DType::I64)),
    ("particle.names", KeyType::List(DType::Str)),
    ("residue.names", KeyType::List(DType::Str)),
    ("residue.ids", KeyType::List(DType::Str)),
    ("chain.names", KeyType::List(DType::Str)),
    ("particle.elements", KeyType::List(DType::U32)),
    ("particle.colors", KeyType::List(DType::U32)),
    ("bond.orders", KeyType::List(DType::F32)),
];

/// (key, unit) of every conventional frame key with a physical unit (NanoVer fixes nm,
/// ps, kJ/mol).
const UNITS: &[(&str, &str)] = &[
    ("particle.positions", "nm"),
    ("particle.velocities", "nm/ps"),
    ("particle.forces", "kJ/(mol·nm)"),
    ("particle.forces.system", "kJ/(mol·nm)"),
    ("system.box.vectors", "nm"),
    ("system.simulation.time", "ps"),
    ("system.temperature", "K"),
    ("energy.kinetic", "kJ/mol"),
    ("energy.potential", "kJ/mol"),
    ("energy.total", "kJ/mol"),
    ("energy.user.total", "kJ/mol"),
    ("forces.user.sparse", "kJ/(mol·nm)"),
    ("forces.user.work_done", "kJ/mol"),
    ("server.timestamp", "s"),
];

/// The fields of the `frame` channel NanoVer fixes the units of, as a channel declares them
/// (types and shapes vary with the simulation: they are left to the records).
pub fn frame_fields() -> Vec<FieldSpec> {
    UNITS
        .iter()
        .map(|(k, u)| FieldSpec::new(*k).with_unit(*u))
        .collect()
}

/// A record's time in whole microseconds (NanoVer's clock), noting a truncation in
/// `loss`; `None` (noted) for a negative time, which NanoVer cannot hold.
pub fn micros(record: &Record, channel: &str, loss: &mut LossReport) -> Option<u64> {
    if record.time < 0 {
        loss.add(channel, "time", "negative time; record dropped");
        return None;
    }
    if record.time % 1000 != 0 {
        loss.add(channel, "time", "time truncated to whole microseconds");
    }
    Some((record.time / 1000) as u64)
}

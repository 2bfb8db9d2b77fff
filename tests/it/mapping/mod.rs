//! Recordings of one family into another family's model (docs/formats/mapping.md).

mod elodin_foreign_groups;
mod elodin_from_icarec;
mod elodin_world_pos;
mod icarus;
mod late_entities;
mod nanover;
mod positions;
mod tes;

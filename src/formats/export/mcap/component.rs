//! What an Icarus component's topic holds: its signals (`Vehicle.Nav.position`, entity
//! `Vehicle.Nav`) as fields, and the per-axis signals HDF5 and CSV split vectors into
//! (`Vehicle.Nav.position.x`, entity `Vehicle.Nav.position`) regrouped into the vector they
//! came from, so that a recording gives the same topics and fields from each of its forms.
//!
//! Axes are recognised by name, as the Icarus profile names them (x, y, z; w, x, y, z;
//! m00 … m22): a group of sibling signals whose names are exactly one such set, of one
//! dtype. Only in a recording whose format splits vectors so ([`SPLITS_VECTORS`]): an
//! `.icarec` component may well have scalar signals named x, y and z. Anything else stays
//! a signal of its own.

/// The formats that write each element of a vector signal as a signal of its own.
pub const SPLITS_VECTORS: &[&str] = &["icarus-hdf5", "icarus-csv"];

use crate::model::{Channel, Entity, FieldSpec, Record, QUATERNION_WXYZ};

const VEC3: [&str; 3] = ["x", "y", "z"];
const QUAT: [&str; 4] = ["w", "x", "y", "z"];
/// Row-major, as the model holds a Mat3.
const MAT3: [&str; 9] = [
    "m00", "m01", "m02", "m10", "m11", "m12", "m20", "m21", "m22",
];

/// Where a channel's records go in a component's topic.
pub struct Place {
    pub component: String,
    /// The member it feeds (the signal's channel name; of an axis, the vector's).
    pub member: String,
    /// Of an axis: its element in the vector, row-major.
    pub element: Option<usize>,
    pub is_static: bool,
}

/// A field of a component's topic.
pub struct Member {
    pub spec: FieldSpec,
    /// The signal's channel name (of a regrouped vector, the name it was split from).
    pub name: String,
    /// Of a regrouped vector: the names of its axes, row-major.
    pub axes: Option<&'static [&'static str]>,
}

/// The component `record` (of `channel`) is a signal or, when `regroup`, an axis of.
pub fn place(
    channels: &[Channel],
    channel: &Channel,
    record: &Record,
    regroup: bool,
) -> Option<Place> {
    let Some(Entity::Name(entity)) = &record.entity else {
        return None;
    };
    let (signal_of, spec) = signal_of(channel)?;
    if signal_of != &**entity {
        return None;
    }
    if let Some((component, _)) = vector(channels, signal_of).filter(|_| regroup) {
        let order = axis_names(channels, signal_of)?;
        return Some(Place {
            component: component.to_string(),
            member: signal_of.to_string(),
            element: order.iter().position(|n| *n == spec.name),
            is_static: spec.is_static,
        });
    }
    Some(Place {
        component: signal_of.to_string(),
        member: channel.name.clone(),
        element: None,
        is_static: spec.is_static,
    })
}

/// The fields of `component`'s topic (static or not), in channel order: each signal, and
/// when `regroup` each vector regrouped from axes (at its first axis).
pub fn members(
    channels: &[Channel],
    component: &str,
    is_static: bool,
    regroup: bool,
) -> Vec<Member> {
    let mut members: Vec<Member> = Vec::new();
    for c in channels {
        let Some((of, spec)) = signal_of(c) else {
            continue;
        };
        if spec.is_static != is_static {
            continue;
        }
        if of == component {
            members.push(Member {
                spec: spec.clone(),
                name: c.name.clone(),
                axes: None,
            });
        } else if let Some((parent, name)) = vector(channels, of).filter(|_| regroup) {
            if parent != component || members.iter().any(|m| m.name == of) {
                continue;
            }
            let Some(order) = axis_names(channels, of) else {
                continue;
            };
            let shape = if order.len() == 9 {
                vec![3, 3]
            } else {
                vec![order.len()]
            };
            members.push(Member {
                spec: FieldSpec {
                    name: name.to_string(),
                    shape: Some(shape),
                    semantic: (order.len() == 4).then(|| QUATERNION_WXYZ.to_string()),
                    elements: None,
                    ..spec.clone()
                },
                name: of.to_string(),
                axes: Some(order),
            });
        }
    }
    members
}

/// A channel of one declared field named by the channel's last part: (the rest, the field).
pub fn signal_of(channel: &Channel) -> Option<(&str, &FieldSpec)> {
    let [spec] = channel.fields.as_slice() else {
        return None;
    };
    let component = channel
        .name
        .strip_suffix(spec.name.as_str())?
        .strip_suffix('.')?;
    (channel.declares_all && !component.is_empty()).then_some((component, spec))
}

/// Of a name whose signals are the axes of one vector: (its component, the vector's name).
fn vector<'a>(channels: &[Channel], name: &'a str) -> Option<(&'a str, &'a str)> {
    let (component, vector) = name.rsplit_once('.')?;
    if component.is_empty() {
        return None;
    }
    axis_names(channels, name).map(|_| (component, vector))
}

/// The axis names of the signals of `name`, row-major, when they are exactly one set of
/// the profile's and share a dtype and staticness.
fn axis_names(channels: &[Channel], name: &str) -> Option<&'static [&'static str]> {
    let axes: Vec<&FieldSpec> = channels
        .iter()
        .filter_map(signal_of)
        .filter(|(of, _)| *of == name)
        .map(|(_, spec)| spec)
        .collect();
    let first = axes.first()?;
    let alike = axes.iter().all(|s| {
        s.dtype == first.dtype
            && s.is_static == first.is_static
            && s.shape.as_deref().is_none_or(|d| d.is_empty())
    });
    if !alike || first.dtype.is_none() {
        return None;
    }
    let mut names: Vec<&str> = axes.iter().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    [&VEC3[..], &QUAT[..], &MAT3[..]].into_iter().find(|set| {
        let mut sorted = set.to_vec();
        sorted.sort_unstable();
        sorted == names
    })
}

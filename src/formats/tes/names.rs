//! Names of routing ids, message ids, flags and content types (spec §4–§6), for channels,
//! values and `inspect`.

/// Channels in a fixed order; the routing id of each (`None` for the user channel).
pub const CHANNELS: &[(&str, Option<u16>)] = &[
    ("3es/server_info", Some(1)),
    ("3es/control", Some(2)),
    ("3es/mesh", Some(4)),
    ("3es/camera", Some(5)),
    ("3es/category", Some(6)),
    ("3es/material", Some(7)),
    ("3es/sphere", Some(64)),
    ("3es/box", Some(65)),
    ("3es/cone", Some(66)),
    ("3es/cylinder", Some(67)),
    ("3es/capsule", Some(68)),
    ("3es/plane", Some(69)),
    ("3es/star", Some(70)),
    ("3es/arrow", Some(71)),
    ("3es/mesh_shape", Some(72)),
    ("3es/mesh_set", Some(73)),
    ("3es/point_cloud", Some(74)),
    ("3es/text3d", Some(75)),
    ("3es/text2d", Some(76)),
    ("3es/pose", Some(77)),
    // Null (0), unassigned and user routing ids; the routing id is a value of each record.
    ("3es/user", None),
    // Control/Reset messages, apart from the other control messages: the one frame-delta
    // channel, so that a Reset is a reset in simrec's model (`inspect`, `--split-at-resets`).
    ("3es/reset", Some(2)),
];

/// Channel index of the user channel and of the Reset channel.
pub const USER_CHANNEL: u32 = 20;
pub const RESET_CHANNEL: u32 = 21;

/// Whether a message is a Control/Reset (spec §6.2).
pub fn is_reset(routing: u16, message: u16) -> bool {
    routing == 2 && message == 5
}

/// Channel index of a message.
pub fn channel_of(routing: u16, message: u16) -> u32 {
    if is_reset(routing, message) {
        return RESET_CHANNEL;
    }
    match routing {
        1 | 2 => routing as u32 - 1,
        4..=7 => routing as u32 - 2,
        64..=77 => routing as u32 - 58,
        _ => USER_CHANNEL,
    }
}

/// Routing id of a channel, where it has one.
pub fn routing_of_channel(name: &str) -> Option<u16> {
    CHANNELS
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(_, r)| *r)
}

pub fn routing_name(routing: u16) -> &'static str {
    match routing {
        0 => "Null",
        1 => "ServerInfo",
        2 => "Control",
        3 => "CollatedPacket",
        4 => "Mesh",
        5 => "Camera",
        6 => "Category",
        7 => "Material",
        64 => "Sphere",
        65 => "Box",
        66 => "Cone",
        67 => "Cylinder",
        68 => "Capsule",
        69 => "Plane",
        70 => "Star",
        71 => "Arrow",
        72 => "MeshShape",
        73 => "MeshSet",
        74 => "PointCloud",
        75 => "Text3D",
        76 => "Text2D",
        77 => "Pose",
        8..=63 | 78..=2047 => "Unassigned",
        _ => "User",
    }
}

/// The message name 3esinfo prints for a (routing, message) pair.
pub fn message_name(routing: u16, message: u16) -> &'static str {
    match routing {
        1 => "ServerInfo",
        2 => match message {
            0 => "Null",
            1 => "Frame",
            2 => "CoordinateFrame",
            3 => "FrameCount",
            4 => "ForceFrameFlush",
            5 => "Reset",
            6 => "Keyframe",
            7 => "End",
            _ => "Unknown",
        },
        3 => "CollatedPacket",
        4 => match message {
            0 => "Invalid",
            1 => "Destroy",
            2 => "Create",
            3 => "Vertex",
            4 => "Index",
            5 => "VertexColour",
            6 => "Normal",
            7 => "UV",
            8 => "SetMaterial",
            9 => "Redefine",
            10 => "Finalise",
            _ => "Unknown",
        },
        5 => "Camera",
        6 => match message {
            0 => "Name",
            _ => "Unknown",
        },
        64..=2047 => match message {
            0 => "Null",
            1 => "Create",
            2 => "Update",
            3 => "Destroy",
            4 => "Data",
            _ => "Unknown",
        },
        _ => "Message",
    }
}

pub fn content_type(t: u8) -> &'static str {
    match t {
        1 => "int8",
        2 => "uint8",
        3 => "int16",
        4 => "uint16",
        5 => "int32",
        6 => "uint32",
        7 => "int64",
        8 => "uint64",
        9 => "float32",
        10 => "float64",
        11 => "packed_float16",
        12 => "packed_float32",
        _ => "none",
    }
}

pub fn mesh_data_type(t: u16) -> &'static str {
    match t {
        0 => "Vertices",
        1 => "Indices",
        2 => "Normals",
        3 => "Colours",
        0xFFFF => "End",
        _ => "Unknown",
    }
}

/// Names of the set ObjectFlag bits, by protocol version (spec §5 table).
pub fn flag_names(version_minor: u16, routing: u16, flags: u16) -> Vec<&'static str> {
    let user = match routing {
        76 => "WorldSpace",
        75 => "ScreenFacing",
        72 => "CalculateNormals",
        _ => "User",
    };
    let table: &[(u16, &'static str)] = match version_minor {
        0 | 1 => &[
            (1, "Wire"),
            (2, "Transparent"),
            (4, "TwoSided"),
            (8, "UpdateMode"),
            (16, "Position"),
            (32, "Rotation"),
            (64, "Scale"),
            (128, "Colour"),
            (0x1000, "User"),
        ],
        2 => &[
            (1, "Wire"),
            (2, "Transparent"),
            (4, "TwoSided"),
            (8, "Replace"),
            (16, "MultiShape"),
            (32, "SkipResources"),
            (256, "User"),
            (512, "UpdateMode"),
            (1024, "Position"),
            (2048, "Rotation"),
            (4096, "Scale"),
            (8192, "Colour"),
        ],
        _ => &[
            (1, "DoublePrecision"),
            (2, "Wire"),
            (4, "Transparent"),
            (8, "TwoSided"),
            (16, "Replace"),
            (32, "MultiShape"),
            (64, "SkipResources"),
            (256, "User"),
            (512, "UpdateMode"),
            (1024, "Position"),
            (2048, "Rotation"),
            (4096, "Scale"),
            (8192, "Colour"),
        ],
    };
    table
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, n)| if *n == "User" { user } else { *n })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_indices_name_their_routing_ids() {
        for (i, (name, routing)) in CHANNELS.iter().enumerate() {
            let i = i as u32;
            match routing {
                Some(2) if *name == "3es/reset" => assert_eq!(channel_of(2, 5), i),
                Some(r) => assert_eq!(channel_of(*r, 1), i, "{name}"),
                None => assert_eq!(channel_of(2048, 0), i, "{name}"),
            }
        }
        assert_eq!(CHANNELS[USER_CHANNEL as usize].0, "3es/user");
        assert_eq!(CHANNELS[RESET_CHANNEL as usize].0, "3es/reset");
        assert_eq!(channel_of(2, 1), 1);
        assert_eq!(channel_of(0, 0), USER_CHANNEL);
        assert_eq!(channel_of(100, 1), USER_CHANNEL);
    }
}

//! The Elodin writer's `world_pos` for bodies given as a Vec3 `position` and a scalar-first
//! quaternion of one named entity (the shape of an Icarus vehicle), read back.

use std::collections::VecDeque;

use simrec::formats::{registry, Source};
use simrec::model::{
    Array, ArrayData, Channel, ChannelKind, Composition, DType, Entity, FieldSpec, Header, Record,
    Value, QUATERNION_WXYZ,
};

use crate::util::listed::{f64s, write_elodin, Listed};

fn signal(name: &str, field: FieldSpec) -> Channel {
    let mut c = Channel::new(name, ChannelKind::Signals, Composition::SampleHold);
    c.fields = vec![field];
    c
}

/// Two ticks of a vehicle at (1, 2, 3) then (4, 5, 6), turning from the identity to a
/// quarter turn about z (w, x, y, z = 0.7071…, 0, 0, 0.7071…); a second entity has a
/// position only.
fn vehicle() -> Listed {
    let mut header = Header::new("test", "1");
    header.add_channel(signal(
        "Rocket.Vehicle.position",
        FieldSpec::typed("position", DType::F64, &[3]).with_unit("m"),
    ));
    let mut attitude = FieldSpec::typed("attitude", DType::F64, &[4]);
    attitude.semantic = Some(QUATERNION_WXYZ.into());
    header.add_channel(signal("Rocket.Vehicle.attitude", attitude));
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let mut records = VecDeque::new();
    for (tick, (p, q)) in [
        ([1.0, 2.0, 3.0], [1.0, 0.0, 0.0, 0.0]),
        ([4.0, 5.0, 6.0], [h, 0.0, 0.0, h]),
    ]
    .into_iter()
    .enumerate()
    {
        let t = tick as i64 * 10_000_000;
        for (channel, key, value, entity) in [
            (0, "position", f64s(&p), "Rocket.Vehicle"),
            (1, "attitude", f64s(&q), "Rocket.Vehicle"),
            (0, "position", f64s(&[7.0, 8.0, 9.0]), "Debris"),
        ] {
            let mut r = Record::new(t, channel);
            r.entity = Some(Entity::from(entity));
            r.frame = Some(tick as i64);
            r.values = vec![(key.into(), value)];
            records.push_back(r);
        }
    }
    Listed { header, records }
}

#[test]
fn a_named_body_with_position_and_quaternion_gets_world_pos_scalar_last() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("replay/");
    let written = write_elodin(&mut vehicle(), &out);
    assert!(written.report.loss.is_empty(), "{:?}", written.report.loss);
    let back = registry::open(&out, Default::default()).unwrap();
    let header = back.header().clone();
    let world_pos = header
        .channels
        .iter()
        .position(|c| c.name == "world_pos")
        .expect("a world_pos archetype") as u32;
    let entities = &header.metadata["elodin"]["entities"];
    assert_eq!(entities[(1u64 << 48).to_string()], "Rocket.Vehicle");
    assert_eq!(entities[((1u64 << 48) + 1).to_string()], "Debris");
    let rows: Vec<(i64, Option<Entity>, Vec<f64>)> = back
        .map(Result::unwrap)
        .filter(|r| r.channel == world_pos)
        .map(|r| match &r.values[..] {
            [(
                k,
                Value::Array(Array {
                    data: ArrayData::F64(v),
                    shape,
                }),
            )] => {
                assert_eq!((k.as_str(), shape.as_slice()), ("world_pos", &[7][..]));
                (r.time, r.entity, v.clone())
            }
            other => panic!("{other:?}"),
        })
        .collect();
    let h = std::f64::consts::FRAC_1_SQRT_2;
    // Only the vehicle (Debris has no quaternion), once per tick.
    assert_eq!(
        rows,
        [
            (
                0,
                Some(Entity::Id(1 << 48)),
                vec![0.0, 0.0, 0.0, 1.0, 1.0, 2.0, 3.0]
            ),
            (
                10_000_000,
                Some(Entity::Id(1 << 48)),
                vec![0.0, 0.0, h, h, 4.0, 5.0, 6.0]
            ),
        ]
    );
}

//! Any recording → Elodin's model (docs/formats/mapping.md, "→ Elodin"): the Elodin writer
//! maps every family's channels itself (`foreign.rs`, docs/formats/elodin.md); this stage
//! only makes NanoVer's particles what Elodin draws, bodies: each particle becomes an entity of a
//! `particle` channel with a `world_pos` (`[qx, qy, qz, qw, x, y, z]`: the identity
//! attitude, the position in metres, nm × 1e-9), named `particle I NAME` after
//! `particle.names` (`particle I` without). The frame's other keys stay in its channel.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::formats::mapping::{LossHandle, Mapping};
use crate::formats::{Family, ReadError, Source};
use crate::model::{
    Array, ArrayData, Channel, ChannelKind, Composition, DType, Entity, FieldSpec, Header, Record,
    Value, MAPPED_FROM,
};

const PARTICLES: &str = "particle.positions";
const PARTICLE_NAMES: &str = "particle.names";
const WORLD_POS: &str = "world_pos";

/// The family's [`Mapping`]: a recording of another family read as Elodin's bodies.
pub struct IntoElodin;

impl Mapping for IntoElodin {
    /// NanoVer only: the Elodin writer lays out every other family's channels itself
    /// (`foreign.rs`), and NanoVer's particles are what it could not draw. The
    /// family is asked about by name, not imported.
    fn maps(&self, from: Option<&Family>) -> bool {
        from.is_some_and(|f| f.name == "nanover")
    }

    fn map<'a>(&self, source: Box<dyn Source + 'a>, loss: LossHandle) -> Box<dyn Source + 'a> {
        Box::new(ToElodin::new(source, loss))
    }
}

pub struct ToElodin<'a> {
    inner: Box<dyn Source + 'a>,
    header: Header,
    /// The `particle` channel's id: after the source's channels.
    particle: u32,
    names: Vec<Arc<str>>,
    out: VecDeque<Record>,
    loss: LossHandle,
}

impl<'a> ToElodin<'a> {
    pub fn new(inner: Box<dyn Source + 'a>, loss: LossHandle) -> ToElodin<'a> {
        let mut header = inner.header().clone();
        header
            .metadata
            .insert(MAPPED_FROM.into(), header.format.clone().into());
        let mut particle = Channel::new("particle", ChannelKind::Signals, Composition::Independent);
        particle.fields = vec![FieldSpec::typed(WORLD_POS, DType::F64, &[7]).with_unit("m")];
        let id = header.add_channel(particle);
        ToElodin {
            inner,
            header,
            particle: id,
            names: Vec::new(),
            out: VecDeque::new(),
            loss,
        }
    }

    fn name(&mut self, i: usize, given: Option<&String>) -> Arc<str> {
        while self.names.len() <= i {
            let k = self.names.len();
            self.names.push(Arc::from(format!("particle {k}").as_str()));
        }
        if let Some(n) = given {
            self.names[i] = Arc::from(format!("particle {i} {n}").as_str());
        }
        self.names[i].clone()
    }

    /// The particles of a frame record as `particle` records, queued before the record.
    fn particles(&mut self, record: &mut Record) {
        let Some(at) = record.values.iter().position(|(k, _)| k == PARTICLES) else {
            return;
        };
        let given: Vec<String> = match record.get(PARTICLE_NAMES) {
            Some(Value::Array(Array {
                data: ArrayData::Str(names),
                ..
            })) => names.clone(),
            _ => Vec::new(),
        };
        let (_, value) = record.values.remove(at);
        let Value::Array(Array { data, .. }) = value else {
            return;
        };
        let flat: Vec<f64> = match data {
            ArrayData::F32(v) => v.iter().map(|&x| x as f64).collect(),
            ArrayData::F64(v) => v,
            _ => return,
        };
        let channel = self
            .inner
            .header()
            .channels
            .get(record.channel as usize)
            .map_or("?", |c| c.name.as_str())
            .to_string();
        self.loss.borrow_mut().add(
            &channel,
            PARTICLES,
            "into world_pos of one `particle` entity each: nm → m (×1e-9)",
        );
        for (i, p) in flat.chunks_exact(3).enumerate() {
            let name = self.name(i, given.get(i));
            let mut r = Record::new(record.time, self.particle);
            r.frame = record.frame;
            r.entity = Some(Entity::Name(name));
            let pos = vec![0.0, 0.0, 0.0, 1.0, p[0] * 1e-9, p[1] * 1e-9, p[2] * 1e-9];
            r.values = vec![(
                WORLD_POS.into(),
                Value::Array(Array::flat(ArrayData::F64(pos))),
            )];
            self.out.push_back(r);
        }
    }
}

impl Iterator for ToElodin<'_> {
    type Item = Result<Record, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.out.pop_front() {
                return Some(Ok(r));
            }
            let mut record = match self.inner.next()? {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            };
            self.particles(&mut record);
            if !record.values.is_empty() {
                self.out.push_back(record);
            }
        }
    }
}

stage_source!(ToElodin, own);

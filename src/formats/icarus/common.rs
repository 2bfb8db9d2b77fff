//! What the Icarus formats (`icarec`, `icarus-hdf5`, `icarus-csv`) share: the signal types of
//! the `.icarec` profile (spec §A3), the names of a composite's components when it is
//! expanded into dotted scalars (HDF5, CSV), and how a signal name maps onto the model
//! (spec §A10): one channel per signal, named by the signal; each record's entity is the
//! signal's component path and its one field is the last name segment
//! (`Rocket.Vehicle.position` → entity `Rocket.Vehicle`, field `position`).

use std::fmt;

use crate::formats::frames::{le_bytes, Packed};
use crate::formats::{Conflict, ReadError, SliceRequest, Source};
use crate::model::time::{outside, unordered_span, window_outside};
use crate::model::{DType, FieldSpec, Nanos, Seconds, TimeSpec};

/// Key of `Header::metadata` under which the `.icarec` reader keeps the source's
/// `schema.json` and `metadata.json` objects (`{"schema": {…}, "metadata": {…} or null}`).
pub const ICAREC_HEADER_KEY: &str = "icarec";

/// The element of a signal type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    Double,
    Float,
    Int32,
    Int64,
    Bool,
}

impl Element {
    pub fn name(self) -> &'static str {
        match self {
            Element::Double => "double",
            Element::Float => "float",
            Element::Int32 => "int32",
            Element::Int64 => "int64",
            Element::Bool => "bool",
        }
    }

    /// Canonical size in bytes.
    pub fn size(self) -> usize {
        match self {
            Element::Double | Element::Int64 => 8,
            Element::Float | Element::Int32 => 4,
            Element::Bool => 1,
        }
    }

    pub fn dtype(self) -> DType {
        match self {
            Element::Double => DType::F64,
            Element::Float => DType::F32,
            Element::Int32 => DType::I32,
            Element::Int64 => DType::I64,
            Element::Bool => DType::Bool,
        }
    }

    /// The element a model dtype is stored as, when the profile has one.
    pub fn from_dtype(dtype: DType) -> Option<Element> {
        Some(match dtype {
            DType::F64 => Element::Double,
            DType::F32 => Element::Float,
            DType::I32 => Element::Int32,
            DType::I64 => Element::Int64,
            DType::Bool => Element::Bool,
            _ => return None,
        })
    }

    fn parse(text: &str) -> Option<Element> {
        Some(match text {
            "double" => Element::Double,
            "float" => Element::Float,
            "int32" => Element::Int32,
            "int64" => Element::Int64,
            "bool" => Element::Bool,
            _ => return None,
        })
    }
}

/// Scalar or one of the profile's composites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Scalar,
    Vec3,
    /// Scalar first: w, x, y, z.
    Quat,
    /// Stored column-major.
    Mat3,
}

/// A signal's `type` (`double`, `Vec3<float>`, `Mat3<int64>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignalType {
    pub kind: Kind,
    pub element: Element,
}

/// Component suffixes in storage order (spec §A3).
const VEC3: [&str; 3] = ["x", "y", "z"];
const QUAT: [&str; 4] = ["w", "x", "y", "z"];
const MAT3: [&str; 9] = [
    "m00", "m10", "m20", "m01", "m11", "m21", "m02", "m12", "m22",
];

impl SignalType {
    pub fn scalar(element: Element) -> SignalType {
        SignalType {
            kind: Kind::Scalar,
            element,
        }
    }

    /// The type a schema names; type strings match exactly, without spaces. Composites of
    /// `bool` are not in the profile.
    pub fn parse(text: &str) -> Option<SignalType> {
        let composite = |prefix: &str, kind: Kind| {
            let inner = text.strip_prefix(prefix)?.strip_suffix('>')?;
            let element = Element::parse(inner).filter(|e| *e != Element::Bool)?;
            Some(SignalType { kind, element })
        };
        Element::parse(text)
            .map(SignalType::scalar)
            .or_else(|| composite("Vec3<", Kind::Vec3))
            .or_else(|| composite("Quat<", Kind::Quat))
            .or_else(|| composite("Mat3<", Kind::Mat3))
    }

    /// Number of elements.
    pub fn count(self) -> usize {
        match self.kind {
            Kind::Scalar => 1,
            Kind::Vec3 => 3,
            Kind::Quat => 4,
            Kind::Mat3 => 9,
        }
    }

    /// Canonical size in bytes.
    pub fn size(self) -> usize {
        self.count() * self.element.size()
    }

    /// The model shape: `[]`, `[3]`, `[4]` (w, x, y, z) or `[3, 3]` (row, column).
    pub fn shape(self) -> &'static [usize] {
        match self.kind {
            Kind::Scalar => &[],
            Kind::Vec3 => &[3],
            Kind::Quat => &[4],
            Kind::Mat3 => &[3, 3],
        }
    }

    /// Suffixes of the expanded components in storage order (`x`, `w`, `m10`); none for a
    /// scalar.
    pub fn component_names(self) -> &'static [&'static str] {
        match self.kind {
            Kind::Scalar => &[],
            Kind::Vec3 => &VEC3,
            Kind::Quat => &QUAT,
            Kind::Mat3 => &MAT3,
        }
    }

    /// The row-major (model) index of the element at storage index `i`: the identity except
    /// for Mat3, stored column-major (storage index 3c + r holds element (r, c)).
    pub fn model_index(self, i: usize) -> usize {
        match self.kind {
            Kind::Mat3 => (i % 3) * 3 + i / 3,
            _ => i,
        }
    }

    /// The type a field spec is written as: its dtype's element and its shape's composite.
    /// `None` when the profile has no such type (strings, other shapes, undeclared types).
    pub fn of_field(spec: &FieldSpec) -> Option<SignalType> {
        let element = Element::from_dtype(spec.dtype?)?;
        let kind = match spec.shape.as_deref()? {
            [] => Kind::Scalar,
            [3] => Kind::Vec3,
            [4] => Kind::Quat,
            [3, 3] => Kind::Mat3,
            _ => return None,
        };
        if kind != Kind::Scalar && element == Element::Bool {
            return None;
        }
        Some(SignalType { kind, element })
    }
}

impl SignalType {
    /// How a value of this type lies in a frame block ([`Packed`]): Mat3 column-major.
    pub fn packed(self) -> Packed {
        Packed {
            dtype: self.element.dtype(),
            shape: self.shape().to_vec(),
            column_major: self.kind == Kind::Mat3,
        }
    }

    /// The type whose values are packed as `packed` says, when the profile has one.
    pub fn of_packed(packed: &Packed) -> Option<SignalType> {
        let element = Element::from_dtype(packed.dtype)?;
        let kind = match packed.shape.as_slice() {
            [] => Kind::Scalar,
            [3] => Kind::Vec3,
            [4] => Kind::Quat,
            [3, 3] => Kind::Mat3,
            _ => return None,
        };
        let ty = SignalType { kind, element };
        (ty.packed() == *packed).then_some(ty)
    }
}

impl fmt::Display for SignalType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let element = self.element.name();
        match self.kind {
            Kind::Scalar => f.write_str(element),
            Kind::Vec3 => write!(f, "Vec3<{element}>"),
            Kind::Quat => write!(f, "Quat<{element}>"),
            Kind::Mat3 => write!(f, "Mat3<{element}>"),
        }
    }
}

/// The model's entity and field name for a signal: its component path and its last name
/// segment (`Rocket.Vehicle.position` → (`Some("Rocket.Vehicle")`, `position`)); a name
/// without a dot has no entity.
pub fn entity_and_field(signal: &str) -> (Option<&str>, &str) {
    match signal.rsplit_once('.') {
        Some((path, last)) if !path.is_empty() && !last.is_empty() => (Some(path), last),
        _ => (None, signal),
    }
}

/// The dotted scalar names a signal expands to in flat layouts, in storage order
/// (`Nav.q` of type `Quat<double>` → `Nav.q.w`, `Nav.q.x`, `Nav.q.y`, `Nav.q.z`).
pub fn expanded_names(signal: &str, ty: SignalType) -> Vec<String> {
    match ty.kind {
        Kind::Scalar => vec![signal.to_string()],
        _ => ty
            .component_names()
            .iter()
            .map(|c| format!("{signal}.{c}"))
            .collect(),
    }
}

/// The frames `[first, end)` of a time or frame window over `frames` frames of non-decreasing
/// times (spec §A14, §B4), and the window's start and end times (`Nanos::MAX`: open). `time`
/// reads one frame's time; points in time are found by binary search, so a window costs
/// about 2 log₂(frames) reads, whatever the recording's length.
pub struct FrameWindow {
    pub first: u64,
    pub end: u64,
    pub start_ns: Nanos,
    pub end_ns: Nanos,
}

/// The first of `frames` frames whose time is at or after `ns`: a binary search.
fn first_at(
    frames: u64,
    ns: Nanos,
    time: &mut impl FnMut(u64) -> Result<Nanos, ReadError>,
) -> Result<u64, ReadError> {
    let (mut lo, mut hi) = (0, frames);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if time(mid)? < ns {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

pub fn frame_window(
    frames: u64,
    start: Option<TimeSpec>,
    end: Option<TimeSpec>,
    mut time: impl FnMut(u64) -> Result<Nanos, ReadError>,
) -> Result<FrameWindow, ReadError> {
    let last = if frames > 0 { time(frames - 1)? } else { 0 };
    // (frame index, time) of a point.
    let mut point = |spec: TimeSpec, is_start: bool| -> Result<(u64, Nanos), ReadError> {
        Ok(match spec {
            TimeSpec::At(ns) => (first_at(frames, ns, &mut time)?, ns),
            TimeSpec::FromEnd(d) => {
                let ns = last.saturating_sub(d);
                (first_at(frames, ns, &mut time)?, ns)
            }
            TimeSpec::Frame(i) if i < frames => (i, time(i)?),
            TimeSpec::Frame(i) if is_start => {
                return Err(ReadError::Conflict(Conflict::NoSuchFrame {
                    frame: i,
                    frames,
                }))
            }
            // A frame past the last: to the end.
            TimeSpec::Frame(_) => (frames, Nanos::MAX),
        })
    };
    let (first, start_ns) = match start {
        Some(s) => point(s, true)?,
        None => (0, 0),
    };
    let (end_frame, end_ns) = match end {
        Some(e) => point(e, false)?,
        None => (frames, Nanos::MAX),
    };
    let open_end = (end_ns != Nanos::MAX).then_some(end_ns);
    if let Some(why) = unordered_span(start_ns, open_end) {
        return Err(why.into());
    }
    if frames == 0 || window_outside(start_ns, open_end, time(0)?, last) {
        return Err(outside(Seconds(start_ns), open_end.map(Seconds)).into());
    }
    let first = first.min(frames);
    Ok(FrameWindow {
        first,
        end: end_frame.clamp(first, frames),
        start_ns,
        end_ns,
    })
}

/// Element `i` (storage order) of a signal of type `ty` at `offset` in `block`, as an f64
/// (a float widened exactly). Out of range reads as 0: the frame source checked its sizes.
pub fn element_f64(block: &[u8], offset: usize, ty: SignalType, i: usize) -> f64 {
    let at = offset + i * ty.element.size();
    match ty.element {
        Element::Double => f64::from_le_bytes(le_bytes(block, at)),
        Element::Float => f64::from(f32::from_le_bytes(le_bytes(block, at))),
        Element::Int32 => f64::from(i32::from_le_bytes(le_bytes(block, at))),
        Element::Int64 => i64::from_le_bytes(le_bytes(block, at)) as f64,
        Element::Bool => f64::from(u8::from(block.get(at).is_some_and(|&b| b != 0))),
    }
}

/// Element `i` (storage order) of an integer or bool signal as an i64 (a bool is 0 or 1).
pub fn element_i64(block: &[u8], offset: usize, ty: SignalType, i: usize) -> i64 {
    let at = offset + i * ty.element.size();
    match ty.element {
        Element::Int32 => i64::from(i32::from_le_bytes(le_bytes(block, at))),
        Element::Int64 => i64::from_le_bytes(le_bytes(block, at)),
        Element::Bool => i64::from(block.get(at).is_some_and(|&b| b != 0)),
        Element::Double => f64::from_le_bytes(le_bytes(block, at)) as i64,
        Element::Float => f32::from_le_bytes(le_bytes(block, at)) as i64,
    }
}

/// A reader of an Icarus recording that finds a window's frames by binary search over its
/// frame times and then reads only those ([`slice_by_frames`]).
pub(crate) trait FrameWindowed: Sized {
    /// The frames of the window `[start, end)`.
    fn frames_of(
        &mut self,
        start: Option<TimeSpec>,
        end: Option<TimeSpec>,
    ) -> Result<FrameWindow, ReadError>;

    /// The reader, reading the frames of `window` only (times from its start with `rebase`).
    fn slice_frames(self, window: &FrameWindow, rebase: bool) -> Self;
}

/// The Icarus formats' slice of one opened recording (spec §A14): only the frames of the
/// window are read. `None` when the window holds no frame, so that the generic window
/// carries the state at its start.
pub(crate) fn slice_by_frames<R: FrameWindowed + Source + 'static>(
    opened: Result<R, ReadError>,
    slice: &SliceRequest,
) -> Option<Result<Box<dyn Source>, ReadError>> {
    let mut reader = match opened {
        Ok(r) => r,
        Err(e) => return Some(Err(e)),
    };
    Some(match reader.frames_of(slice.start, slice.end) {
        Ok(w) if w.first == w.end => return None,
        Ok(w) => Ok(Box::new(reader.slice_frames(&w, slice.rebase))),
        Err(e) => Err(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_parse_and_print_as_the_profile_names_them() {
        for text in [
            "double",
            "float",
            "int32",
            "int64",
            "bool",
            "Vec3<double>",
            "Quat<float>",
            "Mat3<int64>",
            "Vec3<int32>",
        ] {
            let ty = SignalType::parse(text).unwrap();
            assert_eq!(ty.to_string(), text);
        }
        for bad in ["Vec3<bool>", "Vec3< double>", "Vec3<double", "uint8", ""] {
            assert_eq!(SignalType::parse(bad), None, "{bad}");
        }
        assert_eq!(SignalType::parse("Vec3<double>").unwrap().size(), 24);
        assert_eq!(SignalType::parse("Quat<float>").unwrap().size(), 16);
        assert_eq!(SignalType::parse("Mat3<int32>").unwrap().size(), 36);
        assert_eq!(SignalType::parse("bool").unwrap().size(), 1);
    }

    #[test]
    fn mat3_storage_is_column_major() {
        let m = SignalType::parse("Mat3<double>").unwrap();
        // Storage m00 m10 m20 m01 …: storage index 1 is (1, 0), row-major index 3.
        let order: Vec<usize> = (0..9).map(|i| m.model_index(i)).collect();
        assert_eq!(order, [0, 3, 6, 1, 4, 7, 2, 5, 8]);
        assert_eq!(m.component_names()[1], "m10");
        assert_eq!(m.shape(), &[3, 3]);
    }

    #[test]
    fn every_type_is_packed_as_the_profile_stores_it_and_back() {
        for text in [
            "double",
            "bool",
            "Vec3<float>",
            "Quat<int64>",
            "Mat3<int32>",
        ] {
            let ty = SignalType::parse(text).unwrap();
            let packed = ty.packed();
            assert_eq!(packed.count(), ty.count());
            assert_eq!(packed.element_size(), ty.element.size());
            assert_eq!(packed.column_major, ty.kind == Kind::Mat3);
            let order: Vec<usize> = (0..ty.count()).map(|i| packed.model_index(i)).collect();
            let want: Vec<usize> = (0..ty.count()).map(|i| ty.model_index(i)).collect();
            assert_eq!(order, want, "{text}");
            assert_eq!(SignalType::of_packed(&packed), Some(ty));
        }
        let mut matrix = SignalType::parse("Mat3<double>").unwrap().packed();
        matrix.column_major = false;
        assert_eq!(SignalType::of_packed(&matrix), None);
    }

    #[test]
    fn a_field_spec_names_its_type() {
        let spec = FieldSpec::typed("q", DType::F64, &[4]);
        assert_eq!(
            SignalType::of_field(&spec).unwrap().to_string(),
            "Quat<double>"
        );
        let spec = FieldSpec::typed("m", DType::F32, &[3, 3]);
        assert_eq!(
            SignalType::of_field(&spec).unwrap().to_string(),
            "Mat3<float>"
        );
        assert_eq!(
            SignalType::of_field(&FieldSpec::typed("s", DType::Str, &[])),
            None
        );
        assert_eq!(
            SignalType::of_field(&FieldSpec::typed("v", DType::F64, &[5])),
            None
        );
        assert_eq!(SignalType::of_field(&FieldSpec::new("unknown")), None);
    }

    #[test]
    fn names_map_to_entity_and_field_and_expand_in_storage_order() {
        assert_eq!(
            entity_and_field("Rocket.Vehicle.position"),
            (Some("Rocket.Vehicle"), "position")
        );
        assert_eq!(entity_and_field("time_scale"), (None, "time_scale"));
        assert_eq!(
            expanded_names("Nav.q", SignalType::parse("Quat<double>").unwrap()),
            ["Nav.q.w", "Nav.q.x", "Nav.q.y", "Nav.q.z"]
        );
        assert_eq!(
            expanded_names("Aero.alpha", SignalType::parse("double").unwrap()),
            ["Aero.alpha"]
        );
    }
}

//! Two values of one key, compared as `diff` defines equality: numbers within a tolerance
//! (integers and floats numerically unless types are strict), arrays element by element with
//! their shapes, maps key by key, NaN equal to NaN only when asked.

use std::fmt::Write as _;

use crate::model::{Array, ArrayData, Value};

/// How close two numbers must be to count as equal: `|a − b| ≤ atol + rtol × |b|`, `b` being
/// the second recording's value (numpy's `isclose`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
    /// Types must match too: 3 (an integer) differs from 3.0, a float32 from a float64.
    pub strict_types: bool,
    /// NaN equals NaN.
    pub nan_equal: bool,
}

/// What differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Two numbers (or strings, booleans) with different values.
    Value,
    /// Values of different types.
    Type,
    /// Arrays or lists of different shapes, maps with different keys.
    Shape,
    /// The key is in A's record and not in B's.
    KeyOnlyInA,
    KeyOnlyInB,
    /// A record of A has no counterpart in B.
    OnlyInA,
    OnlyInB,
    /// The frame values of two aligned records differ.
    Frame,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Value => "value",
            Kind::Type => "type",
            Kind::Shape => "shape",
            Kind::KeyOnlyInA => "key_only_in_a",
            Kind::KeyOnlyInB => "key_only_in_b",
            Kind::OnlyInA => "only_in_a",
            Kind::OnlyInB => "only_in_b",
            Kind::Frame => "frame",
        }
    }

    /// The kind for people (`only in A`).
    pub fn label(self) -> &'static str {
        match self {
            Kind::Value => "value",
            Kind::Type => "type",
            Kind::Shape => "shape",
            Kind::KeyOnlyInA => "key only in A",
            Kind::KeyOnlyInB => "key only in B",
            Kind::OnlyInA => "only in A",
            Kind::OnlyInB => "only in B",
            Kind::Frame => "frame value",
        }
    }
}

/// One difference inside a key's value.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub kind: Kind,
    /// Where inside the value: `[12,2]` (an array element), `.b.c` (a map entry), `[2]` (a
    /// list item); empty for the value itself.
    pub path: String,
    /// The element's index in each dimension, for an array element.
    pub index: Option<Vec<usize>>,
    pub a: Shown,
    pub b: Shown,
    pub abs_error: Option<f64>,
    pub rel_error: Option<f64>,
}

/// A value as a difference shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    Missing,
    Int(i128),
    Float(f64),
    Bool(bool),
    /// Anything else, as `cat` shows it (`"text"`, `float32[21,3] [...]`).
    Text(String),
}

/// What comparing one key found: the largest errors between numbers, how many elements
/// differ, and (when asked) each difference.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub max_abs: f64,
    pub max_rel: f64,
    /// Elements (numbers, strings, items) that differ.
    pub differing: u64,
    pub found: Vec<Found>,
}

/// A number of either kind: integers compare exactly as integers.
#[derive(Debug, Clone, Copy)]
enum Num {
    I(i128),
    F(f64),
}

fn num(v: &Value) -> Option<Num> {
    Some(match v {
        Value::Int(i) => Num::I(i128::from(*i)),
        Value::UInt(u) => Num::I(i128::from(*u)),
        Value::Float(x) => Num::F(*x),
        Value::F32(x) => Num::F(f64::from(*x)),
        _ => return None,
    })
}

/// The type name `--strict-types` compares: integers are one type whatever their sign (a
/// msgpack writer picks unsigned for a positive number), floats differ by width.
fn strict_type(v: &Value) -> &'static str {
    match v {
        Value::Int(_) | Value::UInt(_) => "integer",
        Value::Float(_) => "float64",
        Value::F32(_) => "float32",
        other => other.kind_name(),
    }
}

fn shown(v: &Value) -> Shown {
    match v {
        Value::Int(i) => Shown::Int(i128::from(*i)),
        Value::UInt(u) => Shown::Int(i128::from(*u)),
        Value::Float(x) => Shown::Float(*x),
        Value::F32(x) => Shown::Float(f64::from(*x)),
        Value::Bool(b) => Shown::Bool(*b),
        other => Shown::Text(crate::report::render::value_text(other)),
    }
}

/// Compares values under one tolerance; `keep` says whether to keep each difference found
/// (the caller keeps only the first few of a run).
pub struct Comparer {
    pub tolerance: Tolerance,
}

impl Comparer {
    /// `a` against `b`, adding to `out`.
    pub fn compare(&self, a: &Value, b: &Value, keep: bool, out: &mut Outcome) {
        let mut path = String::new();
        self.value(a, b, &mut path, keep, out);
    }

    /// Two numbers: (equal, absolute error, relative error). The errors are `None` when a
    /// NaN is involved.
    fn numbers(&self, a: Num, b: Num) -> (bool, Option<f64>, Option<f64>) {
        let t = &self.tolerance;
        let (abs, fb) = match (a, b) {
            (Num::I(x), Num::I(y)) => ((x - y).unsigned_abs() as f64, y as f64),
            _ => {
                let (x, y) = (as_f64(a), as_f64(b));
                if x.is_nan() || y.is_nan() {
                    return (x.is_nan() && y.is_nan() && t.nan_equal, None, None);
                }
                if x == y {
                    return (true, Some(0.0), Some(0.0));
                }
                ((x - y).abs(), y)
            }
        };
        let rel = if abs == 0.0 { 0.0 } else { abs / fb.abs() };
        (abs <= t.atol + t.rtol * fb.abs(), Some(abs), Some(rel))
    }

    fn note(out: &mut Outcome, abs: Option<f64>, rel: Option<f64>) {
        if let Some(abs) = abs {
            out.max_abs = out.max_abs.max(abs);
        }
        if let Some(rel) = rel {
            out.max_rel = out.max_rel.max(rel);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn differ(
        out: &mut Outcome,
        keep: bool,
        kind: Kind,
        path: &str,
        index: Option<Vec<usize>>,
        a: Shown,
        b: Shown,
        abs: Option<f64>,
        rel: Option<f64>,
    ) {
        out.differing += 1;
        if keep {
            out.found.push(Found {
                kind,
                path: path.to_string(),
                index,
                a,
                b,
                abs_error: abs,
                rel_error: rel,
            });
        }
    }

    fn value(&self, a: &Value, b: &Value, path: &mut String, keep: bool, out: &mut Outcome) {
        let strict = self.tolerance.strict_types;
        if let (Some(x), Some(y)) = (num(a), num(b)) {
            let (equal, abs, rel) = self.numbers(x, y);
            Self::note(out, abs, rel);
            if !equal {
                Self::differ(
                    out,
                    keep,
                    Kind::Value,
                    path,
                    None,
                    shown(a),
                    shown(b),
                    abs,
                    rel,
                );
            } else if strict && strict_type(a) != strict_type(b) {
                Self::differ(
                    out,
                    keep,
                    Kind::Type,
                    path,
                    None,
                    shown(a),
                    shown(b),
                    abs,
                    rel,
                );
            }
            return;
        }
        match (a, b) {
            (Value::Array(x), Value::Array(y)) => self.arrays(x, y, path, keep, out),
            (Value::List(x), Value::List(y)) => {
                if x.len() != y.len() {
                    let (sa, sb) = (shown_shape(&[x.len()]), shown_shape(&[y.len()]));
                    Self::differ(out, keep, Kind::Shape, path, None, sa, sb, None, None);
                    return;
                }
                for (i, (u, v)) in x.iter().zip(y).enumerate() {
                    let len = path.len();
                    let _ = write!(path, "[{i}]");
                    self.value(u, v, path, keep, out);
                    path.truncate(len);
                }
            }
            // A list of scalars and a 1-D array hold the same numbers in two encodings.
            (Value::Array(x), Value::List(y)) | (Value::List(y), Value::Array(x)) if !strict => {
                let swapped = matches!(a, Value::List(_));
                if x.checked_shape() != [y.len()] {
                    let (mut sa, mut sb) =
                        (shown_shape(&x.checked_shape()), shown_shape(&[y.len()]));
                    if swapped {
                        std::mem::swap(&mut sa, &mut sb);
                    }
                    Self::differ(out, keep, Kind::Shape, path, None, sa, sb, None, None);
                    return;
                }
                for (i, v) in y.iter().enumerate() {
                    let e = element(&x.data, i);
                    let len = path.len();
                    let _ = write!(path, "[{i}]");
                    if swapped {
                        self.value(v, &e, path, keep, out);
                    } else {
                        self.value(&e, v, path, keep, out);
                    }
                    path.truncate(len);
                }
            }
            (Value::Map(x), Value::Map(y)) => {
                for (k, u) in x {
                    let len = path.len();
                    path.push('.');
                    path.push_str(k);
                    match y.iter().find(|(l, _)| l == k) {
                        Some((_, v)) => self.value(u, v, path, keep, out),
                        None => Self::differ(
                            out,
                            keep,
                            Kind::KeyOnlyInA,
                            path,
                            None,
                            shown(u),
                            Shown::Missing,
                            None,
                            None,
                        ),
                    }
                    path.truncate(len);
                }
                for (k, v) in y {
                    if !x.iter().any(|(l, _)| l == k) {
                        let len = path.len();
                        path.push('.');
                        path.push_str(k);
                        Self::differ(
                            out,
                            keep,
                            Kind::KeyOnlyInB,
                            path,
                            None,
                            Shown::Missing,
                            shown(v),
                            None,
                            None,
                        );
                        path.truncate(len);
                    }
                }
            }
            (Value::Dict(x), Value::Dict(y)) => {
                if x.len() != y.len() {
                    let (sa, sb) = (shown_shape(&[x.len()]), shown_shape(&[y.len()]));
                    Self::differ(out, keep, Kind::Shape, path, None, sa, sb, None, None);
                    return;
                }
                for (i, ((ka, va), (kb, vb))) in x.iter().zip(y).enumerate() {
                    let len = path.len();
                    let _ = write!(path, "{{{i}}}");
                    self.value(ka, kb, path, keep, out);
                    self.value(va, vb, path, keep, out);
                    path.truncate(len);
                }
            }
            _ if std::mem::discriminant(a) == std::mem::discriminant(b) => {
                if a != b {
                    Self::differ(
                        out,
                        keep,
                        Kind::Value,
                        path,
                        None,
                        shown(a),
                        shown(b),
                        None,
                        None,
                    );
                }
            }
            _ => Self::differ(
                out,
                keep,
                Kind::Type,
                path,
                None,
                shown(a),
                shown(b),
                None,
                None,
            ),
        }
    }

    fn arrays(&self, x: &Array, y: &Array, path: &mut String, keep: bool, out: &mut Outcome) {
        let (sx, sy) = (x.checked_shape(), y.checked_shape());
        if sx != sy {
            Self::differ(
                out,
                keep,
                Kind::Shape,
                path,
                None,
                shown_shape(&sx),
                shown_shape(&sy),
                None,
                None,
            );
            return;
        }
        if self.tolerance.strict_types && x.dtype() != y.dtype() {
            Self::differ(
                out,
                keep,
                Kind::Type,
                path,
                None,
                Shown::Text(x.dtype().to_string()),
                Shown::Text(y.dtype().to_string()),
                None,
                None,
            );
            return;
        }
        // The common case, identical data, costs one memory comparison (NaN never compares
        // equal, so NaN-holding arrays take the slow path and the NaN rule).
        if x.data == y.data {
            return;
        }
        for i in 0..x.len() {
            let (u, v) = (element(&x.data, i), element(&y.data, i));
            let mut inner = Outcome::default();
            self.value(&u, &v, path, false, &mut inner);
            Self::note(out, Some(inner.max_abs), Some(inner.max_rel));
            if inner.differing == 0 {
                continue;
            }
            // Re-run for the record of it, with the element's index in the path.
            out.differing += inner.differing;
            if keep {
                let index = unravel(i, &sx);
                let len = path.len();
                let parts: Vec<String> = index.iter().map(usize::to_string).collect();
                let _ = write!(path, "[{}]", parts.join(","));
                let mut again = Outcome::default();
                self.value(&u, &v, path, true, &mut again);
                for mut f in again.found {
                    f.index = Some(index.clone());
                    out.found.push(f);
                }
                path.truncate(len);
            }
        }
    }
}

fn as_f64(n: Num) -> f64 {
    match n {
        Num::I(i) => i as f64,
        Num::F(x) => x,
    }
}

fn shown_shape(shape: &[usize]) -> Shown {
    let parts: Vec<String> = shape.iter().map(usize::to_string).collect();
    Shown::Text(format!("shape [{}]", parts.join(",")))
}

/// The index in each dimension of flat element `i` of a row-major array of `shape`.
fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    if shape.is_empty() {
        return vec![i];
    }
    let mut index = vec![0; shape.len()];
    for (d, &n) in shape.iter().enumerate().rev() {
        if n == 0 {
            continue;
        }
        index[d] = i % n;
        i /= n;
    }
    index
}

/// Element `i` of an array as a scalar value.
fn element(data: &ArrayData, i: usize) -> Value {
    match data {
        ArrayData::Bool(v) => Value::Bool(v[i]),
        ArrayData::U8(v) => Value::UInt(v[i].into()),
        ArrayData::U16(v) => Value::UInt(v[i].into()),
        ArrayData::U32(v) => Value::UInt(v[i].into()),
        ArrayData::U64(v) => Value::UInt(v[i]),
        ArrayData::I8(v) => Value::Int(v[i].into()),
        ArrayData::I16(v) => Value::Int(v[i].into()),
        ArrayData::I32(v) => Value::Int(v[i].into()),
        ArrayData::I64(v) => Value::Int(v[i]),
        ArrayData::F32(v) => Value::F32(v[i]),
        ArrayData::F64(v) => Value::Float(v[i]),
        ArrayData::Str(v) => Value::Str(v[i].clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(rtol: f64, atol: f64) -> Comparer {
        Comparer {
            tolerance: Tolerance {
                rtol,
                atol,
                ..Tolerance::default()
            },
        }
    }

    fn differs(c: &Comparer, a: Value, b: Value) -> bool {
        let mut out = Outcome::default();
        c.compare(&a, &b, true, &mut out);
        out.differing > 0
    }

    #[test]
    fn tolerances_hold_at_their_boundaries() {
        // 1.5 − 1.0 = 0.5 exactly in binary.
        assert!(!differs(
            &cmp(0.0, 0.5),
            Value::Float(1.5),
            Value::Float(1.0)
        ));
        assert!(differs(
            &cmp(0.0, 0.4999999),
            Value::Float(1.5),
            Value::Float(1.0)
        ));
        // rtol scales B's value: 0.5 ≤ 0.25 × 2.
        assert!(!differs(
            &cmp(0.25, 0.0),
            Value::Float(2.5),
            Value::Float(2.0)
        ));
        assert!(differs(
            &cmp(0.2499999, 0.0),
            Value::Float(2.5),
            Value::Float(2.0)
        ));
        // The two add up.
        assert!(!differs(
            &cmp(0.125, 0.25),
            Value::Float(2.5),
            Value::Float(2.0)
        ));
        assert!(differs(
            &cmp(0.125, 0.2499),
            Value::Float(2.5),
            Value::Float(2.0)
        ));
    }

    #[test]
    fn integers_and_floats_compare_numerically_unless_strict() {
        let c = cmp(0.0, 0.0);
        assert!(!differs(&c, Value::Int(3), Value::Float(3.0)));
        assert!(!differs(&c, Value::UInt(3), Value::Int(3)));
        assert!(differs(&c, Value::Int(3), Value::Float(3.5)));
        let strict = Comparer {
            tolerance: Tolerance {
                strict_types: true,
                ..Tolerance::default()
            },
        };
        let mut out = Outcome::default();
        strict.compare(&Value::Int(3), &Value::Float(3.0), true, &mut out);
        assert_eq!(out.found[0].kind, Kind::Type);
        assert!(!differs(&strict, Value::UInt(3), Value::Int(3)));
        assert!(differs(&strict, Value::F32(0.5), Value::Float(0.5)));
    }

    #[test]
    fn nan_equals_nan_only_when_asked() {
        let nan = || Value::Float(f64::NAN);
        assert!(differs(&cmp(0.0, 0.0), nan(), nan()));
        let c = Comparer {
            tolerance: Tolerance {
                nan_equal: true,
                ..Tolerance::default()
            },
        };
        assert!(!differs(&c, nan(), nan()));
        assert!(differs(&c, nan(), Value::Float(1.0)));
        let arr = |x: f32| {
            Value::Array(Array::with_shape(ArrayData::F32(vec![1.0, x]), vec![2]).unwrap())
        };
        assert!(!differs(&c, arr(f32::NAN), arr(f32::NAN)));
        assert!(differs(&cmp(0.0, 0.0), arr(f32::NAN), arr(f32::NAN)));
    }

    #[test]
    fn an_array_element_is_named_by_its_index_in_each_dimension() {
        let mut a = vec![0.0f32; 63];
        let b = a.clone();
        a[12 * 3 + 2] = 0.25;
        let arr =
            |d: Vec<f32>| Value::Array(Array::with_shape(ArrayData::F32(d), vec![21, 3]).unwrap());
        let mut out = Outcome::default();
        cmp(0.0, 0.0).compare(&arr(a), &arr(b), true, &mut out);
        assert_eq!(out.differing, 1);
        let f = &out.found[0];
        assert_eq!(
            (f.path.as_str(), f.index.clone()),
            ("[12,2]", Some(vec![12, 2]))
        );
        assert_eq!(
            (f.a.clone(), f.b.clone()),
            (Shown::Float(0.25), Shown::Float(0.0))
        );
        assert_eq!(f.abs_error, Some(0.25));
        assert_eq!(out.max_abs, 0.25);
    }

    #[test]
    fn maps_compare_key_by_key_and_lists_with_their_lengths() {
        let map = |v: Vec<(&str, Value)>| {
            Value::Map(v.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
        };
        let a = map(vec![("x", Value::Int(1)), ("y", Value::Bool(true))]);
        let b = map(vec![("y", Value::Bool(true)), ("x", Value::Int(1))]);
        assert!(!differs(&cmp(0.0, 0.0), a.clone(), b));
        let c = map(vec![("x", Value::Int(2)), ("z", Value::Null)]);
        let mut out = Outcome::default();
        cmp(0.0, 0.0).compare(&a, &c, true, &mut out);
        let kinds: Vec<(Kind, &str)> = out
            .found
            .iter()
            .map(|f| (f.kind, f.path.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                (Kind::Value, ".x"),
                (Kind::KeyOnlyInA, ".y"),
                (Kind::KeyOnlyInB, ".z")
            ]
        );
        let list = |n: usize| Value::List(vec![Value::Int(1); n]);
        assert!(differs(&cmp(0.0, 0.0), list(2), list(3)));
        assert!(!differs(&cmp(0.0, 0.0), list(2), list(2)));
    }
}

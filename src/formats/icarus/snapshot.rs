//! Warm start (spec §A13): how one signal's value at a frame is printed in the snapshot's
//! JSON, by its Icarus type. Floats print as the shortest decimal that reads back as the
//! same number of their own width (an f32 0.7854 stays `0.7854`), integers exactly, Mat3
//! flat in storage order (column-major), non-finite floats as strings.

use super::common::SignalType;
use crate::model::{ArrayData, FieldSpec, Value};

/// Appends the JSON text of `value`, a signal of `spec`'s type; `None` when the value is
/// not of a type the profile has (nothing is appended then).
pub fn value_json(value: &Value, spec: &FieldSpec, out: &mut String) -> Option<()> {
    let ty = SignalType::of_field(spec)?;
    match value {
        Value::Float(v) => f64_json(*v, out),
        Value::F32(v) => f32_json(*v, out),
        Value::Int(v) => out.push_str(itoa::Buffer::new().format(*v)),
        Value::UInt(v) => out.push_str(itoa::Buffer::new().format(*v)),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Array(a) if a.data.len() == ty.count() => {
            out.push('[');
            for i in 0..ty.count() {
                if i > 0 {
                    out.push(',');
                }
                let at = ty.model_index(i);
                match &a.data {
                    ArrayData::F64(v) => f64_json(v[at], out),
                    ArrayData::F32(v) => f32_json(v[at], out),
                    ArrayData::I32(v) => out.push_str(itoa::Buffer::new().format(v[at])),
                    ArrayData::I64(v) => out.push_str(itoa::Buffer::new().format(v[at])),
                    ArrayData::Bool(v) => out.push_str(if v[at] { "true" } else { "false" }),
                    _ => return None,
                }
            }
            out.push(']');
        }
        _ => return None,
    }
    Some(())
}

/// Whether every float of `value` is finite (integers and bools always are).
pub fn is_finite(value: &Value) -> bool {
    match value {
        Value::Float(v) => v.is_finite(),
        Value::F32(v) => v.is_finite(),
        Value::Array(a) => match &a.data {
            ArrayData::F64(v) => v.iter().all(|x| x.is_finite()),
            ArrayData::F32(v) => v.iter().all(|x| x.is_finite()),
            _ => true,
        },
        _ => true,
    }
}

fn non_finite(nan: bool, negative: bool) -> &'static str {
    match (nan, negative) {
        (true, _) => "\"NaN\"",
        (false, false) => "\"inf\"",
        (false, true) => "\"-inf\"",
    }
}

pub fn f64_json(v: f64, out: &mut String) {
    if v.is_finite() {
        out.push_str(ryu::Buffer::new().format_finite(v));
    } else {
        out.push_str(non_finite(v.is_nan(), v < 0.0));
    }
}

fn f32_json(v: f32, out: &mut String) {
    if v.is_finite() {
        out.push_str(ryu::Buffer::new().format_finite(v));
    } else {
        out.push_str(non_finite(v.is_nan(), v < 0.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Array, DType};

    fn spec(dtype: DType, shape: &[usize]) -> FieldSpec {
        FieldSpec {
            dtype: Some(dtype),
            shape: Some(shape.to_vec()),
            ..FieldSpec::new("v")
        }
    }

    fn text(value: Value, spec: &FieldSpec) -> String {
        let mut out = String::new();
        value_json(&value, spec, &mut out).unwrap();
        out
    }

    #[test]
    fn each_row_of_the_table() {
        assert_eq!(text(Value::F32(0.1234), &spec(DType::F32, &[])), "0.1234");
        assert_eq!(text(Value::Float(0.1), &spec(DType::F64, &[])), "0.1");
        assert_eq!(
            text(Value::Int(9_007_199_254_740_993), &spec(DType::I64, &[])),
            "9007199254740993"
        );
        assert_eq!(text(Value::Bool(true), &spec(DType::Bool, &[])), "true");
        assert_eq!(
            text(Value::Float(f64::NAN), &spec(DType::F64, &[])),
            "\"NaN\""
        );
        assert_eq!(
            text(Value::F32(f32::NEG_INFINITY), &spec(DType::F32, &[])),
            "\"-inf\""
        );
        let quat = Array::flat(ArrayData::F64(vec![1.0, 0.0, 0.0, 0.0]));
        assert_eq!(
            text(Value::Array(quat), &spec(DType::F64, &[4])),
            "[1.0,0.0,0.0,0.0]"
        );
        // Rows (1, 2, 3), (4, 5, 6), (7, 8, 9) are stored column by column.
        let m = Array {
            shape: vec![3, 3],
            data: ArrayData::F32(vec![1., 2., 3., 4., 5., 6., 7., 8., 9.]),
        };
        assert_eq!(
            text(Value::Array(m), &spec(DType::F32, &[3, 3])),
            "[1.0,4.0,7.0,2.0,5.0,8.0,3.0,6.0,9.0]"
        );
    }
}

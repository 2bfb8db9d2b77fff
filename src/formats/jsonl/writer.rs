//! The JSON Lines writer. Numbers are written with itoa/ryu: shortest text that reads back
//! to the same value (float32 elements as float32), so nothing is rounded.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::formats::output::Destination;
use crate::formats::{Sink, WriteError, WriteReport};
use crate::model::{Array, ArrayData, Channel, Entity, Header, Record, Value};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

pub struct JsonlWriter {
    out: Destination,
    path: PathBuf,
    channels: Vec<String>,
    line: Vec<u8>,
    /// Fields of the current record that could not be written exactly.
    lost: Vec<(String, &'static str)>,
    report: WriteReport,
}

impl JsonlWriter {
    pub fn new(out: Destination, path: &Path, header: &Header) -> JsonlWriter {
        JsonlWriter {
            out,
            path: path.to_path_buf(),
            channels: header.channels.iter().map(|c| c.name.clone()).collect(),
            line: Vec::with_capacity(1 << 16),
            lost: Vec::new(),
            report: WriteReport::default(),
        }
    }
}

impl Sink for JsonlWriter {
    fn add_channel(&mut self, channel: &Channel) -> Result<(), WriteError> {
        self.channels.push(channel.name.clone());
        Ok(())
    }

    fn write(&mut self, record: &Record) -> Result<(), WriteError> {
        let channel = self
            .channels
            .get(record.channel as usize)
            .map(String::as_str)
            .unwrap_or("?");
        let line = &mut self.line;
        line.clear();
        line.extend_from_slice(b"{\"time_ns\":");
        line.extend_from_slice(itoa::Buffer::new().format(record.time).as_bytes());
        line.extend_from_slice(b",\"channel\":");
        string(line, channel);
        if let Some(frame) = record.frame {
            line.extend_from_slice(b",\"frame\":");
            line.extend_from_slice(itoa::Buffer::new().format(frame).as_bytes());
        }
        match &record.entity {
            Some(Entity::Id(id)) => {
                line.extend_from_slice(b",\"entity\":");
                line.extend_from_slice(itoa::Buffer::new().format(*id).as_bytes());
            }
            Some(Entity::Name(name)) => {
                line.extend_from_slice(b",\"entity\":");
                string(line, name);
            }
            None => {}
        }
        line.extend_from_slice(b",\"values\":{");
        let mut first = true;
        for (key, value) in &record.values {
            if *value == Value::Removed {
                continue;
            }
            if !first {
                line.push(b',');
            }
            first = false;
            string(line, key);
            line.push(b':');
            json_value(line, key, value, &mut self.lost);
        }
        line.push(b'}');
        let mut removed = record
            .values
            .iter()
            .filter(|(_, v)| *v == Value::Removed)
            .peekable();
        if removed.peek().is_some() {
            line.extend_from_slice(b",\"removed\":[");
            for (i, (key, _)) in removed.enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                string(line, key);
            }
            line.push(b']');
        }
        line.extend_from_slice(b"}\n");
        self.out
            .write_all(line)
            .map_err(|e| WriteError::io(&self.path, e))?;
        self.lost.sort();
        self.lost.dedup();
        for (field, reason) in self.lost.drain(..) {
            self.report.loss.add(channel, &field, reason);
        }
        self.report.records += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<WriteReport, WriteError> {
        self.out
            .flush()
            .map_err(|e| WriteError::io(&self.path, e))?;
        Ok(self.report)
    }
}

fn string(line: &mut Vec<u8>, s: &str) {
    // Writing a &str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *line, s);
}

fn json_value(
    line: &mut Vec<u8>,
    key: &str,
    value: &Value,
    lost: &mut Vec<(String, &'static str)>,
) {
    match value {
        Value::Null => line.extend_from_slice(b"null"),
        Value::Removed => {
            lost.push((key.to_string(), "nested removal marker written as null"));
            line.extend_from_slice(b"null");
        }
        Value::Bool(b) => line.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Int(i) => line.extend_from_slice(itoa::Buffer::new().format(*i).as_bytes()),
        Value::UInt(u) => line.extend_from_slice(itoa::Buffer::new().format(*u).as_bytes()),
        Value::Float(x) => float(line, key, *x, x.is_finite(), lost),
        Value::F32(x) => float(line, key, *x, x.is_finite(), lost),
        Value::Str(s) => string(line, s),
        Value::Bytes(b) => {
            lost.push((key.to_string(), "bytes written as a base64 string"));
            string(line, &BASE64.encode(b));
        }
        Value::Ext { type_id, bytes } => {
            lost.push((key.to_string(), "msgpack ext written as {type, base64}"));
            line.extend_from_slice(b"{\"type\":");
            line.extend_from_slice(itoa::Buffer::new().format(*type_id).as_bytes());
            line.extend_from_slice(b",\"base64\":");
            string(line, &BASE64.encode(bytes));
            line.push(b'}');
        }
        Value::Dict(entries) => {
            lost.push((
                key.to_string(),
                "non-string map key written as its JSON text",
            ));
            line.push(b'{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                let mut text = Vec::new();
                json_value(&mut text, key, k, lost);
                match k {
                    Value::Str(s) => string(line, s),
                    _ => string(line, &String::from_utf8_lossy(&text)),
                }
                line.push(b':');
                json_value(line, key, v, lost);
            }
            line.push(b'}');
        }
        Value::List(items) => {
            line.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                json_value(line, key, item, lost);
            }
            line.push(b']');
        }
        Value::Map(fields) => {
            line.push(b'{');
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                string(line, k);
                line.push(b':');
                json_value(line, key, v, lost);
            }
            line.push(b'}');
        }
        Value::Array(a) => array(line, key, a, lost),
    }
}

/// A finite float as the shortest text that reads back to the same value of its own
/// width (f32 or f64); NaN and infinities as `null`, counted as lost.
fn float<F: ryu::Float>(
    line: &mut Vec<u8>,
    key: &str,
    x: F,
    finite: bool,
    lost: &mut Vec<(String, &'static str)>,
) {
    if finite {
        line.extend_from_slice(ryu::Buffer::new().format_finite(x).as_bytes());
    } else {
        lost.push((key.to_string(), "non-finite float written as null"));
        line.extend_from_slice(b"null");
    }
}

/// An n-d array as nested JSON arrays following its shape.
fn array(line: &mut Vec<u8>, key: &str, a: &Array, lost: &mut Vec<(String, &'static str)>) {
    nest(line, key, &a.checked_shape(), &a.data, 0, lost);
}

fn nest(
    line: &mut Vec<u8>,
    key: &str,
    dims: &[usize],
    data: &ArrayData,
    offset: usize,
    lost: &mut Vec<(String, &'static str)>,
) {
    let Some((&n, rest)) = dims.split_first() else {
        return element(line, key, data, offset, lost);
    };
    let stride: usize = rest.iter().product();
    line.push(b'[');
    for i in 0..n {
        if i > 0 {
            line.push(b',');
        }
        nest(line, key, rest, data, offset + i * stride, lost);
    }
    line.push(b']');
}

fn element(
    line: &mut Vec<u8>,
    key: &str,
    data: &ArrayData,
    i: usize,
    lost: &mut Vec<(String, &'static str)>,
) {
    let mut buf = itoa::Buffer::new();
    let text = match data {
        ArrayData::Bool(v) => {
            if v[i] {
                "true"
            } else {
                "false"
            }
        }
        ArrayData::U8(v) => buf.format(v[i]),
        ArrayData::U16(v) => buf.format(v[i]),
        ArrayData::U32(v) => buf.format(v[i]),
        ArrayData::U64(v) => buf.format(v[i]),
        ArrayData::I8(v) => buf.format(v[i]),
        ArrayData::I16(v) => buf.format(v[i]),
        ArrayData::I32(v) => buf.format(v[i]),
        ArrayData::I64(v) => buf.format(v[i]),
        ArrayData::F32(v) => return float(line, key, v[i], v[i].is_finite(), lost),
        ArrayData::F64(v) => return float(line, key, v[i], v[i].is_finite(), lost),
        ArrayData::Str(v) => return string(line, &v[i]),
    };
    line.extend_from_slice(text.as_bytes());
}

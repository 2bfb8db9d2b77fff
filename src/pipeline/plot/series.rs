//! What `plot` draws: which values a `--key` names (a glob, an array element, a reduction),
//! and each series decimated while it streams to the smallest and largest value per pixel
//! column.

use globset::{GlobBuilder, GlobMatcher};

use crate::model::{ArrayData, Value};

/// How an array (or the part of it a key names) becomes one number per record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduce {
    /// The Euclidean norm of the elements.
    Norm,
    Mean,
    Min,
    Max,
}

impl Reduce {
    pub fn name(self) -> &'static str {
        match self {
            Reduce::Norm => "norm",
            Reduce::Mean => "mean",
            Reduce::Min => "min",
            Reduce::Max => "max",
        }
    }
}

/// One `--key`: a glob on value names and, optionally, the index of an array element (or
/// of a sub-array, reduced): `particle.positions[12].z` is element [12, 2].
#[derive(Debug, Clone)]
pub struct KeySpec {
    pub text: String,
    glob: GlobMatcher,
    pub index: Vec<usize>,
}

#[derive(Debug, thiserror::Error)]
#[error("--key `{key}`: {reason}")]
pub struct KeyError {
    pub key: String,
    pub reason: String,
}

impl KeySpec {
    /// Parses `GLOB`, `GLOB[i]`, `GLOB[i][j]`, `GLOB[i,j]`, `GLOB[i].x` (`.x .y .z .w`: the
    /// next index 0–3). Only a trailing run of bracketed integers is an index; any other
    /// brackets belong to the glob (`energy.[kp]*`).
    pub fn parse(text: &str) -> Result<KeySpec, KeyError> {
        let err = |reason: &str| KeyError {
            key: text.to_string(),
            reason: reason.to_string(),
        };
        let mut rest = text;
        let mut component = None;
        for (suffix, i) in [(".x", 0), (".y", 1), (".z", 2), (".w", 3)] {
            if let Some(r) = rest.strip_suffix(suffix) {
                if r.ends_with(']') {
                    component = Some(i);
                    rest = r;
                }
                break;
            }
        }
        let mut groups: Vec<Vec<usize>> = Vec::new();
        while let Some(r) = rest.strip_suffix(']') {
            let Some(open) = r.rfind('[') else { break };
            let inside = &r[open + 1..];
            let parsed: Option<Vec<usize>> = inside
                .split(',')
                .map(|n| n.trim().parse::<usize>().ok())
                .collect();
            match parsed {
                Some(p) if !inside.is_empty() => {
                    groups.push(p);
                    rest = &r[..open];
                }
                _ => break,
            }
        }
        if component.is_some() && groups.is_empty() {
            return Err(err("`.x`/`.y`/`.z`/`.w` follows an index: key[12].z"));
        }
        let mut index: Vec<usize> = groups.into_iter().rev().flatten().collect();
        index.extend(component);
        if rest.is_empty() {
            return Err(err("no key name"));
        }
        let glob = GlobBuilder::new(rest)
            .literal_separator(false)
            .backslash_escape(true)
            .build()
            .map_err(|e| err(&e.kind().to_string()))?
            .compile_matcher();
        Ok(KeySpec {
            text: text.to_string(),
            glob,
            index,
        })
    }

    pub fn matches(&self, name: &str) -> bool {
        self.glob.is_match(name)
    }
}

/// The number a record's value gives, as `spec` and `reduce` ask; `Err` says why it gives
/// none (an array without an element or a reduction, an index out of range, text).
pub fn number(value: &Value, index: &[usize], reduce: Option<Reduce>) -> Result<f64, &'static str> {
    let scalar = |v: &Value| -> Option<f64> {
        Some(match v {
            Value::Int(i) => *i as f64,
            Value::UInt(u) => *u as f64,
            Value::Float(x) => *x,
            Value::F32(x) => f64::from(*x),
            Value::Bool(b) => f64::from(u8::from(*b)),
            _ => return None,
        })
    };
    match value {
        Value::Array(a) => {
            let shape = a.checked_shape();
            if index.len() > shape.len().max(1) {
                return Err("more indices than the array has dimensions");
            }
            // The block the index names: its offset and length in row-major order.
            let mut offset = 0usize;
            let mut block = a.len();
            for (d, &i) in index.iter().enumerate() {
                let n = shape.get(d).copied().unwrap_or(a.len());
                if i >= n {
                    return Err("index out of range");
                }
                block /= n.max(1);
                offset += i * block;
            }
            let values = (offset..offset + block).map(|i| element(&a.data, i));
            match (block, reduce) {
                (0, _) => Err("empty array"),
                (1, None) => element(&a.data, offset).ok_or("not a number"),
                (_, None) => Err("an array: name an element (key[3], key[12].z) or give --reduce"),
                (n, Some(r)) => {
                    let mut acc = Accumulate::new(r);
                    for v in values {
                        acc.add(v.ok_or("not a number")?);
                    }
                    Ok(acc.finish(n))
                }
            }
        }
        Value::List(items) if !index.is_empty() || reduce.is_some() => {
            let items: Vec<&Value> = match index.first() {
                Some(&i) => vec![items.get(i).ok_or("index out of range")?],
                None => items.iter().collect(),
            };
            if let (Some(r), true) = (reduce, index.is_empty()) {
                let mut acc = Accumulate::new(r);
                for v in &items {
                    acc.add(scalar(v).ok_or("not a number")?);
                }
                return Ok(acc.finish(items.len()));
            }
            number(items[0], &index[1..], reduce)
        }
        v => {
            if !index.is_empty() {
                return Err("not an array");
            }
            scalar(v).ok_or("not a number")
        }
    }
}

struct Accumulate {
    how: Reduce,
    acc: f64,
}

impl Accumulate {
    fn new(how: Reduce) -> Accumulate {
        let acc = match how {
            Reduce::Min => f64::INFINITY,
            Reduce::Max => f64::NEG_INFINITY,
            _ => 0.0,
        };
        Accumulate { how, acc }
    }
    fn add(&mut self, x: f64) {
        match self.how {
            Reduce::Norm => self.acc += x * x,
            Reduce::Mean => self.acc += x,
            Reduce::Min => self.acc = self.acc.min(x),
            Reduce::Max => self.acc = self.acc.max(x),
        }
    }
    fn finish(self, n: usize) -> f64 {
        match self.how {
            Reduce::Norm => self.acc.sqrt(),
            Reduce::Mean => self.acc / n as f64,
            _ => self.acc,
        }
    }
}

fn element(data: &ArrayData, i: usize) -> Option<f64> {
    Some(match data {
        ArrayData::Bool(v) => f64::from(u8::from(*v.get(i)?)),
        ArrayData::U8(v) => f64::from(*v.get(i)?),
        ArrayData::U16(v) => f64::from(*v.get(i)?),
        ArrayData::U32(v) => f64::from(*v.get(i)?),
        ArrayData::U64(v) => *v.get(i)? as f64,
        ArrayData::I8(v) => f64::from(*v.get(i)?),
        ArrayData::I16(v) => f64::from(*v.get(i)?),
        ArrayData::I32(v) => f64::from(*v.get(i)?),
        ArrayData::I64(v) => *v.get(i)? as f64,
        ArrayData::F32(v) => f64::from(*v.get(i)?),
        ArrayData::F64(v) => *v.get(i)?,
        ArrayData::Str(_) => return None,
    })
}

/// One pixel column of a series: its smallest and largest value, which came first, and how
/// many samples fell in it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Column {
    pub min: f64,
    pub max: f64,
    /// The minimum was seen before the maximum (the order the polyline visits them).
    pub min_first: bool,
    pub samples: u64,
}

/// A series decimated to `columns` pixel columns over a known time span: memory is the
/// columns, whatever the number of samples.
#[derive(Debug, Clone)]
pub struct Decimated {
    pub columns: Vec<Column>,
    pub samples: u64,
}

impl Decimated {
    pub fn new(columns: usize) -> Decimated {
        Decimated {
            columns: vec![Column::default(); columns],
            samples: 0,
        }
    }

    /// Adds a sample to column `col` (NaN is skipped: a gap in the line, not a value).
    pub fn add(&mut self, col: usize, y: f64) {
        if y.is_nan() {
            return;
        }
        let Some(c) = self.columns.get_mut(col) else {
            return;
        };
        self.samples += 1;
        if c.samples == 0 {
            *c = Column {
                min: y,
                max: y,
                min_first: true,
                samples: 1,
            };
            return;
        }
        c.samples += 1;
        if y < c.min {
            c.min = y;
            c.min_first = false;
        }
        if y > c.max {
            c.max = y;
            c.min_first = true;
        }
    }

    /// The polyline's points: per column with samples, its minimum and maximum in the order
    /// they came (one point when the column holds a single sample).
    pub fn points(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.columns.iter().enumerate().flat_map(|(i, c)| {
            let (first, second) = if c.min_first {
                (c.min, c.max)
            } else {
                (c.max, c.min)
            };
            let n = c.samples.min(2) as usize;
            [(i, first), (i, second)].into_iter().take(n)
        })
    }

    /// The smallest and largest value of the series.
    pub fn range(&self) -> Option<(f64, f64)> {
        self.columns
            .iter()
            .filter(|c| c.samples > 0)
            .map(|c| (c.min, c.max))
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Array;

    #[test]
    fn key_specs_name_elements_after_the_glob() {
        let k = KeySpec::parse("particle.positions[12].z").unwrap();
        assert_eq!(k.index, [12, 2]);
        assert!(k.matches("particle.positions"));
        assert_eq!(KeySpec::parse("a[1][2]").unwrap().index, [1, 2]);
        assert_eq!(KeySpec::parse("a[1,2]").unwrap().index, [1, 2]);
        let class = KeySpec::parse("energy.[kp]*").unwrap();
        assert!(class.index.is_empty());
        assert!(class.matches("energy.kinetic") && !class.matches("energy.total"));
        assert!(KeySpec::parse("a.z").unwrap().matches("a.z"));
        assert!(KeySpec::parse("[3]").is_err());
    }

    #[test]
    fn values_become_numbers_by_element_or_reduction() {
        let a = Value::Array(
            Array::with_shape(
                ArrayData::F32(vec![3.0, 4.0, 0.0, 1.0, 1.0, 1.0]),
                vec![2, 3],
            )
            .unwrap(),
        );
        assert_eq!(number(&a, &[1, 2], None), Ok(1.0));
        assert_eq!(number(&a, &[0], Some(Reduce::Norm)), Ok(5.0));
        assert_eq!(number(&a, &[], Some(Reduce::Max)), Ok(4.0));
        assert_eq!(number(&a, &[], Some(Reduce::Mean)), Ok(10.0 / 6.0));
        assert_eq!(number(&a, &[1], Some(Reduce::Min)), Ok(1.0));
        assert!(number(&a, &[], None).is_err());
        assert!(number(&a, &[2, 0], None).is_err());
        assert_eq!(number(&Value::Int(7), &[], None), Ok(7.0));
        assert!(number(&Value::Str("x".into()), &[], None).is_err());
    }

    #[test]
    fn a_column_keeps_its_extremes_in_the_order_they_came() {
        let mut d = Decimated::new(3);
        for y in [1.0, 5.0, -2.0, 3.0] {
            d.add(0, y);
        }
        d.add(2, 7.0);
        d.add(1, f64::NAN);
        let points: Vec<_> = d.points().collect();
        assert_eq!(points, [(0, 5.0), (0, -2.0), (2, 7.0)]);
        assert_eq!(d.range(), Some((-2.0, 7.0)));
        assert_eq!(d.samples, 5);
    }
}

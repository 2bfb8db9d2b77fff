//! Parquet's RLE / bit-packed hybrid streams (levels and dictionary indices), walked run by
//! run before the parquet crate decodes them, so that what would make its decoder panic
//! (run headers longer than it accepts, bit widths wider than the values, levels above the
//! column's maximum, streams shorter than the values they must hold) is an error instead.

/// What a walk found: bytes used and how many of the values were equal to `count_of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walk {
    pub bytes: usize,
    pub counted: usize,
    /// The first value, when there was one.
    pub first: Option<u64>,
}

/// Bits needed for values up to `max`.
pub fn bit_width(max: u64) -> u8 {
    (64 - max.leading_zeros()) as u8
}

/// A run header: an unsigned LEB128 of at most 5 bytes (a u32), as the format defines it.
fn header(data: &[u8], pos: &mut usize) -> Result<u32, String> {
    let mut v = 0u64;
    for i in 0..5 {
        let Some(&b) = data.get(*pos) else {
            return Err("the stream ends inside a run header".into());
        };
        *pos += 1;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return u32::try_from(v).map_err(|_| format!("a run header of {v}"));
        }
    }
    Err("a run header longer than 5 bytes".into())
}

/// Element `i` of a bit-packed run of `width`-bit values.
fn packed(bytes: &[u8], i: usize, width: u8) -> u64 {
    let bit = i * usize::from(width);
    let mut word = [0u8; 8];
    let start = bit / 8;
    let n = (bytes.len() - start.min(bytes.len())).min(8);
    word[..n].copy_from_slice(&bytes[start..start + n]);
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    (u64::from_le_bytes(word) >> (bit % 8)) & mask
}

/// Walks `need` values of `width` bits in `data`. Every value must be ≤ `max`; values equal
/// to `count_of` are counted. A final bit-packed run may be cut short (writers truncate
/// the last group), but never before the values it must provide.
pub fn walk(data: &[u8], width: u8, need: usize, max: u64, count_of: u64) -> Result<Walk, String> {
    if width > 32 {
        return Err(format!("a bit width of {width}"));
    }
    let all_fit = width == 0 || max >= (1u64 << width) - 1;
    let mut pos = 0usize;
    let mut got = 0usize;
    let mut counted = 0usize;
    let mut first = None;
    while got < need {
        let h = header(data, &mut pos)?;
        if h & 1 == 1 {
            let values = (h as usize >> 1) * 8;
            let take = values.min(need - got);
            let bits = take * usize::from(width);
            let bytes_needed = bits.div_ceil(8);
            let run_bytes = (h as usize >> 1) * usize::from(width);
            let available = data.len() - pos;
            if bytes_needed > available {
                return Err(format!(
                    "a bit-packed run needs {bytes_needed} bytes where {available} are left"
                ));
            }
            let run = &data[pos..pos + bytes_needed];
            if take > 0 && first.is_none() {
                first = Some(packed(run, 0, width));
            }
            if width == 1 && max >= 1 {
                let ones = count_ones(run, take);
                counted += if count_of == 1 {
                    ones
                } else if count_of == 0 {
                    take - ones
                } else {
                    0
                };
            } else {
                for i in 0..take {
                    let v = packed(run, i, width);
                    if !all_fit && v > max {
                        return Err(format!("a value of {v} where at most {max} is allowed"));
                    }
                    counted += usize::from(v == count_of);
                }
            }
            got += take;
            pos += run_bytes.min(available);
        } else {
            let n = h as usize >> 1;
            let width_bytes = usize::from(width).div_ceil(8);
            if data.len() - pos < width_bytes {
                return Err("the stream ends inside a run value".into());
            }
            let mut word = [0u8; 8];
            word[..width_bytes].copy_from_slice(&data[pos..pos + width_bytes]);
            pos += width_bytes;
            let v = u64::from_le_bytes(word);
            if v > max {
                return Err(format!("a value of {v} where at most {max} is allowed"));
            }
            let take = n.min(need - got);
            if take > 0 && first.is_none() {
                first = Some(v);
            }
            if v == count_of {
                counted += take;
            }
            got += take;
        }
    }
    Ok(Walk {
        bytes: pos,
        counted,
        first,
    })
}

/// Set bits among the first `n` bits of `bytes`.
fn count_ones(bytes: &[u8], n: usize) -> usize {
    let full = n / 8;
    let mut ones: usize = bytes[..full].iter().map(|b| b.count_ones() as usize).sum();
    if !n.is_multiple_of(8) {
        let mask = (1u8 << (n % 8)) - 1;
        ones += (bytes[full] & mask).count_ones() as usize;
    }
    ones
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_packed_groups() {
        // RLE run of 5 × 3 (width 2), then one packed group of 8 values 0..=3,0..=3.
        let data = [0x0a, 0x03, 0x03, 0b1110_0100, 0b1110_0100];
        let w = walk(&data, 2, 13, 3, 3).unwrap();
        assert_eq!((w.bytes, w.counted, w.first), (5, 7, Some(3)));
        assert!(walk(&data, 2, 13, 2, 3).is_err(), "3 above the maximum 2");
        // Width 1 counts with popcount: 8 values 1,0,1,1,0,0,0,1.
        let w = walk(&[0x03, 0b1000_1101], 1, 8, 1, 0).unwrap();
        assert_eq!(w.counted, 4);
        assert!(walk(&data[..4], 2, 13, 3, 3).is_err());
        assert!(walk(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01], 1, 1, 1, 1).is_err());
        assert!(walk(&[0x02, 0x00], 33, 1, u64::MAX, 0).is_err());
    }

    #[test]
    fn every_cut_is_an_error_or_complete() {
        let data = [0x0a, 0x03, 0x03, 0b1110_0100, 0b1110_0100];
        for cut in 0..data.len() {
            assert!(walk(&data[..cut], 2, 13, 3, 3).is_err(), "{cut}");
        }
    }
}

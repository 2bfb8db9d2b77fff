//! NanoVer files framed by hand, independently of simrec's readers: the records of a
//! legacy v2 file and a stored `.nanover.zip` around given members.

use std::path::Path;

use super::bytes::assert_same_bytes;

const MAGIC: [u8; 8] = [0xe3, 0xb7, 0x89, 0x99, 0xc4, 0xe3, 0x71, 0x5c];

/// One record of a NanoVer v2 file, as framed on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRecord {
    /// Byte offset of the record header in the file.
    pub offset: usize,
    /// Timestamp, µs.
    pub time_us: u64,
    pub payload: Vec<u8>,
}

impl RawRecord {
    /// The 24-byte header and the payload, as written.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.payload.len());
        out.extend_from_slice(&(self.time_us as u128).to_le_bytes());
        out.extend_from_slice(&(self.payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.payload);
        out
    }
}

/// Parses a well-formed v2 file (panics on anything else: the tests only feed it good files).
pub fn raw_records(bytes: &[u8]) -> Vec<RawRecord> {
    assert!(bytes.len() >= 16, "shorter than a header");
    assert_eq!(bytes[..8], MAGIC, "magic");
    assert_eq!(u64::from_le_bytes(bytes[8..16].try_into().unwrap()), 2);
    let mut out = Vec::new();
    let mut p = 16;
    while p < bytes.len() {
        assert!(p + 24 <= bytes.len(), "partial record header at {p}");
        let time = u128::from_le_bytes(bytes[p..p + 16].try_into().unwrap());
        let len = u64::from_le_bytes(bytes[p + 16..p + 24].try_into().unwrap()) as usize;
        assert!(p + 24 + len <= bytes.len(), "partial payload at {p}");
        out.push(RawRecord {
            offset: p,
            time_us: u64::try_from(time).unwrap(),
            payload: bytes[p + 24..p + 24 + len].to_vec(),
        });
        p += 24 + len;
    }
    out
}

pub fn raw_records_of(path: &Path) -> Vec<RawRecord> {
    raw_records(&std::fs::read(path).unwrap())
}

/// Asserts two record lists have the same timestamps and payload bytes (offsets aside).
#[track_caller]
pub fn assert_same_records(got: &[RawRecord], want: &[RawRecord]) {
    assert_eq!(got.len(), want.len(), "record count");
    for (i, (a, b)) in got.iter().zip(want).enumerate() {
        assert_eq!(a.time_us, b.time_us, "timestamp of record {i}");
        assert_same_bytes(&a.payload, &b.payload, &format!("payload of record {i}"));
    }
}

/// A stored `.nanover.zip` around `messages` and `index`, as NanoVer's writer lays it
/// out (spec §2.1; byte-identical to the writer's own, `formats::nanover::zip_index` checks).
pub fn nanover_zip_archive(messages: &[u8], index: &[u8]) -> Vec<u8> {
    let (mc, ic) = (crc32fast::hash(messages), crc32fast::hash(index));
    let (m, i) = (messages.len() as u32, index.len() as u32);
    let local = |version: u16, crc: u32, size: u32, name: &str, extra: u16| {
        let mut h = vec![0x50, 0x4b, 3, 4];
        h.extend_from_slice(&version.to_le_bytes());
        h.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x21, 0]);
        h.extend_from_slice(&crc.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(&(name.len() as u16).to_le_bytes());
        h.extend_from_slice(&extra.to_le_bytes());
        h.extend_from_slice(name.as_bytes());
        h
    };
    let central = |version: u16, crc: u32, size: u32, name: &str, offset: u32| {
        let mut h = vec![0x50, 0x4b, 1, 2];
        h.extend_from_slice(&(0x0300 | version).to_le_bytes());
        h.extend_from_slice(&version.to_le_bytes());
        h.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x21, 0]);
        h.extend_from_slice(&crc.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(&(name.len() as u16).to_le_bytes());
        h.extend_from_slice(&[0; 8]);
        h.extend_from_slice(&0x0180_0000u32.to_le_bytes());
        h.extend_from_slice(&offset.to_le_bytes());
        h.extend_from_slice(name.as_bytes());
        h
    };
    let mut out = local(45, mc, u32::MAX, "messages.msgpack", 20);
    out.extend_from_slice(&[1, 0, 16, 0]);
    out.extend_from_slice(&u64::from(m).to_le_bytes());
    out.extend_from_slice(&u64::from(m).to_le_bytes());
    out.extend_from_slice(messages);
    let index_at = out.len() as u32;
    out.extend_from_slice(&local(20, ic, i, "index.msgpack", 0));
    out.extend_from_slice(index);
    let cd_at = out.len() as u32;
    out.extend_from_slice(&central(45, mc, m, "messages.msgpack", 0));
    out.extend_from_slice(&central(20, ic, i, "index.msgpack", index_at));
    let cd_size = out.len() as u32 - cd_at;
    out.extend_from_slice(&[0x50, 0x4b, 5, 6, 0, 0, 0, 0, 2, 0, 2, 0]);
    out.extend_from_slice(&cd_size.to_le_bytes());
    out.extend_from_slice(&cd_at.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

//! The ZIP container (spec §2): finding the two stored members of a finished archive,
//! recognising a crashed one, and the exact headers NanoVer's writer (Python `zipfile`)
//! produces.
//!
//! Written by hand rather than with a ZIP crate: simrec must report each structural
//! fault with its byte offset, read crashed archives that have no directory, and write
//! byte-identical headers (forced zip64 local extra, fixed DOS date, Unix attributes).

use std::io::{Read, Write};

use super::codes::*;
use crate::formats::input::Input;
use crate::report::{Finding, Severity};

pub const MESSAGES: &str = "messages.msgpack";
pub const INDEX: &str = "index.msgpack";
/// ZIP compression methods simrec reads.
pub const STORED: u16 = 0;
pub const DEFLATED: u16 = 8;

const LOCAL_SIG: u32 = 0x0403_4b50;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const EOCD_SIG: u32 = 0x0605_4b50;
const ZIP64_EOCD_SIG: u32 = 0x0606_4b50;
const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;
/// The EOCD lies in the last 22 + 65,535 bytes (its comment is at most 65,535 bytes).
const EOCD_SEARCH: u64 = 22 + 65_535;
const DOS_DATE: u16 = 0x0021;
const MAX32: u64 = 0xFFFF_FFFF;

/// One member's place in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    pub method: u16,
    pub crc: u32,
    /// Bytes in the archive (compressed, for a deflated member).
    pub size: u64,
    /// Bytes once decompressed (`size` for a stored member).
    pub uncompressed: u64,
    pub local_offset: u64,
    /// File offset of the member's first data byte.
    pub data_offset: u64,
}

/// What the container holds.
#[derive(Debug)]
pub enum Layout {
    Finished {
        messages: Member,
        index: Member,
    },
    /// A `messages.msgpack` local header at 0 and no directory: the data starts at
    /// `data_offset` and runs to the end of the file.
    Unfinished {
        data_offset: u64,
    },
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

fn bad(offset: u64, message: String) -> Finding {
    Finding::new(Severity::Error, BAD_ZIP_STRUCTURE, message).offset(offset)
}

/// Reads the container's directory. Errors are findings that stop reading; `notes`
/// receives what reading survives (extra members, compressed members, mismatches).
pub fn read(input: &mut Input, notes: &mut Vec<Finding>) -> Result<Layout, Finding> {
    let len = input.len();
    if len == 0 {
        return Err(Finding::new(Severity::Error, EMPTY_FILE,
            "the file is empty: the recorder was stopped before it wrote anything; nothing is recoverable"));
    }
    let Some((eocd_offset, eocd)) = find_eocd(input)? else {
        return unfinished_or_not_zip(input);
    };
    let dir = directory_place(input, eocd_offset, &eocd)?;
    let members = central_entries(input, dir, notes)?;
    let messages = member(input, &members, MESSAGES, notes)?;
    let index = member(input, &members, INDEX, notes)?;
    for m in &members {
        if m.name != MESSAGES && m.name != INDEX {
            notes.push(
                Finding::new(
                    Severity::Info,
                    EXTRA_MEMBER,
                    format!("member `{}` is not part of a recording; ignored", m.name),
                )
                .offset(m.at),
            );
        }
    }
    for m in [&messages, &index] {
        examine_method(m, notes)?;
    }
    Ok(Layout::Finished { messages, index })
}

/// Where the central directory is, and how many entries it has.
#[derive(Clone, Copy)]
struct DirectoryPlace {
    entries: u64,
    size: u64,
    offset: u64,
}

/// A central directory entry: what the reader keeps of it, and where it is (`at`).
struct Central {
    name: String,
    method: u16,
    crc: u32,
    size: u64,
    uncompressed: u64,
    local: u64,
    at: u64,
}

/// The end of central directory record (from its signature to the file's end) and its
/// offset; `None` when the file's tail has none.
fn find_eocd(input: &mut Input) -> Result<Option<(u64, Vec<u8>)>, Finding> {
    let len = input.len();
    let tail_start = len.saturating_sub(EOCD_SEARCH);
    let tail = input
        .bytes(tail_start, (len - tail_start) as usize)
        .map_err(|e| bad(0, format!("cannot read: {e}")))?;
    // The last signature with a whole 22-byte record after it. A cut archive has none and is
    // searched to its start, so the search is memchr's, not a loop over offsets: the
    // truncation sweeps do it once per cut (docs/performance.md, "Build").
    let whole_record = tail.len().saturating_sub(18);
    let eocd = memchr::memmem::rfind(&tail[..whole_record], &EOCD_SIG.to_le_bytes());
    Ok(eocd.map(|eocd| (tail_start + eocd as u64, tail[eocd..].to_vec())))
}

/// The central directory's place from the EOCD record `e` (at `eocd_offset`), through the
/// zip64 records when its fields are saturated; it must end before the EOCD.
fn directory_place(
    input: &mut Input,
    eocd_offset: u64,
    e: &[u8],
) -> Result<DirectoryPlace, Finding> {
    let mut dir = DirectoryPlace {
        entries: u64::from(le16(e, 10)),
        size: u64::from(le32(e, 12)),
        offset: u64::from(le32(e, 16)),
    };
    if dir.entries == 0xFFFF || dir.size == MAX32 || dir.offset == MAX32 {
        dir = zip64_directory_place(input, eocd_offset)?;
    }
    let (cd_size, cd_offset) = (dir.size, dir.offset);
    if cd_offset
        .checked_add(cd_size)
        .is_none_or(|end| end > eocd_offset)
    {
        return Err(bad(eocd_offset, format!(
            "the central directory ({cd_size} bytes at byte {cd_offset}) does not end before the EOCD at byte {eocd_offset}"
        )));
    }
    Ok(dir)
}

/// The central directory's place from the zip64 EOCD record, found through the locator
/// just before the EOCD.
fn zip64_directory_place(input: &mut Input, eocd_offset: u64) -> Result<DirectoryPlace, Finding> {
    let loc = eocd_offset.checked_sub(20).ok_or_else(|| {
        bad(
            eocd_offset,
            "saturated EOCD fields but no zip64 locator".into(),
        )
    })?;
    let l = input
        .bytes(loc, 20)
        .map_err(|e| bad(loc, e.to_string()))?
        .to_vec();
    if le32(&l, 0) != ZIP64_LOCATOR_SIG {
        return Err(bad(
            loc,
            "saturated EOCD fields but no zip64 EOCD locator before it".into(),
        ));
    }
    let z = le64(&l, 8);
    if z.checked_add(56).is_none_or(|end| end > loc) {
        return Err(bad(
            loc,
            format!("the zip64 EOCD locator points to byte {z}, outside the file"),
        ));
    }
    let r = input
        .bytes(z, 56)
        .map_err(|e| bad(z, e.to_string()))?
        .to_vec();
    if le32(&r, 0) != ZIP64_EOCD_SIG {
        return Err(bad(
            z,
            "no zip64 EOCD record where the locator points".into(),
        ));
    }
    Ok(DirectoryPlace {
        entries: le64(&r, 32),
        size: le64(&r, 40),
        offset: le64(&r, 48),
    })
}

/// Every entry of the central directory.
fn central_entries(
    input: &mut Input,
    dir: DirectoryPlace,
    notes: &mut Vec<Finding>,
) -> Result<Vec<Central>, Finding> {
    let cd = input
        .bytes(dir.offset, dir.size as usize)
        .map_err(|e| bad(dir.offset, e.to_string()))?
        .to_vec();
    let mut members = Vec::new();
    let mut p = 0usize;
    for i in 0..dir.entries {
        let (entry, end) = central_entry(&cd, p, i, dir.offset + p as u64)?;
        examine_entry_flags(&entry, le16(&cd, p + 8), notes)?;
        members.push(entry);
        p = end;
    }
    Ok(members)
}

/// Entry `i` of the central directory `cd`, starting at `p` (byte `at` of the file), and
/// where the next one starts.
fn central_entry(cd: &[u8], p: usize, i: u64, at: u64) -> Result<(Central, usize), Finding> {
    if p + 46 > cd.len() || le32(cd, p) != CENTRAL_SIG {
        return Err(bad(
            at,
            format!("central directory entry {i} is missing or truncated"),
        ));
    }
    let method = le16(cd, p + 10);
    let crc = le32(cd, p + 16);
    let mut csize = u64::from(le32(cd, p + 20));
    let mut uncompressed = u64::from(le32(cd, p + 24));
    let (n, x, c) = (
        le16(cd, p + 28) as usize,
        le16(cd, p + 30) as usize,
        le16(cd, p + 32) as usize,
    );
    let mut local = u64::from(le32(cd, p + 42));
    let end = p + 46 + n + x + c;
    if end > cd.len() {
        return Err(bad(
            at,
            format!("central directory entry {i} runs past the directory"),
        ));
    }
    let name = String::from_utf8_lossy(&cd[p + 46..p + 46 + n]).into_owned();
    // zip64 extra: only the saturated fields are present, in this order.
    let mut q = p + 46 + n;
    while q + 4 <= p + 46 + n + x {
        let (id, size) = (le16(cd, q), le16(cd, q + 2) as usize);
        let data = (q + 4)..(q + 4 + size).min(p + 46 + n + x);
        if id == 1 {
            let mut d = data.start;
            for field in [&mut uncompressed, &mut csize, &mut local] {
                if *field == MAX32 && d + 8 <= data.end {
                    *field = le64(cd, d);
                    d += 8;
                }
            }
        }
        q += 4 + size;
    }
    let entry = Central {
        name,
        method,
        crc,
        size: csize,
        uncompressed,
        local,
        at,
    };
    Ok((entry, end))
}

/// An encrypted member stops reading; a data descriptor is noted.
fn examine_entry_flags(
    entry: &Central,
    flags: u16,
    notes: &mut Vec<Finding>,
) -> Result<(), Finding> {
    let (name, at) = (&entry.name, entry.at);
    if flags & 1 != 0 {
        return Err(Finding::new(
            Severity::Error,
            ENCRYPTED,
            format!("member `{name}` is encrypted"),
        )
        .offset(at));
    }
    if flags & 8 != 0 {
        notes.push(
            Finding::new(
                Severity::Info,
                LOCAL_CENTRAL_MISMATCH,
                format!(
                    "member `{name}` has a data descriptor; the central directory's sizes are used"
                ),
            )
            .offset(at),
        );
    }
    Ok(())
}

/// The member named `wanted`, with where its data starts (from its local header).
fn member(
    input: &mut Input,
    members: &[Central],
    wanted: &str,
    notes: &mut Vec<Finding>,
) -> Result<Member, Finding> {
    let Some(m) = members.iter().find(|m| m.name == wanted) else {
        return Err(Finding::new(
            Severity::Error,
            MISSING_MEMBER,
            format!("the archive has no `{wanted}` member: it is not a NanoVer recording"),
        ));
    };
    let data_offset = local_data_offset(input, &m.name, m.method, m.local, m.size, m.at, notes)?;
    Ok(Member {
        name: m.name.clone(),
        method: m.method,
        crc: m.crc,
        size: m.size,
        uncompressed: m.uncompressed,
        local_offset: m.local,
        data_offset,
    })
}

/// A member deflated is noted (it is read through a temporary file); any other method
/// stops reading.
fn examine_method(m: &Member, notes: &mut Vec<Finding>) -> Result<(), Finding> {
    match m.method {
        STORED => {}
        DEFLATED => notes.push(
            Finding::new(
                Severity::Warning,
                COMPRESSED_MEMBER,
                format!(
                    "member `{}` is deflated (NanoVer stores its members): it is decompressed to a temporary file to be read, and byte offsets in it are counted in the decompressed member",
                    m.name
                ),
            )
            .offset(m.local_offset),
        ),
        other => {
            return Err(Finding::new(
                Severity::Error,
                COMPRESSED_MEMBER,
                format!(
                    "member `{}` uses compression method {other}; simrec reads stored and deflated members (re-zip it with `zip -0`)",
                    m.name
                ),
            )
            .offset(m.local_offset))
        }
    }
    Ok(())
}

/// Both members decompressed into one unnamed temporary file (messages, then index), as
/// stored members over that file, so the reader can address messages by their index
/// offsets. Memory stays that of a chunk; the disk holds the decompressed recording.
pub fn inflate(input: &mut Input, members: [&Member; 2]) -> Result<(Input, [Member; 2]), Finding> {
    let mut file = tempfile::tempfile().map_err(|e| {
        member_fault(
            members[0],
            format!("no temporary file to decompress into: {e}"),
        )
    })?;
    let mut out = [members[0].clone(), members[1].clone()];
    let mut at = 0u64;
    for (m, o) in members.into_iter().zip(&mut out) {
        let size = extract(input, m, &mut file)?;
        *o = Member {
            method: STORED,
            size,
            uncompressed: size,
            data_offset: at,
            ..m.clone()
        };
        at += size;
    }
    let input =
        Input::from_file_handle(file).map_err(|e| member_fault(members[0], e.to_string()))?;
    Ok((input, out))
}

fn member_fault(m: &Member, what: String) -> Finding {
    Finding::new(
        Severity::Error,
        BAD_ZIP_STRUCTURE,
        format!("member `{}`: {what}", m.name),
    )
    .offset(m.data_offset)
}

/// Writes a member's data, decompressed, to `out`; returns its size, which must be the
/// central directory's. A deflated stream is inflated only up to that size plus one byte:
/// a member that would decompress to more (a zip bomb) stops there.
fn extract(input: &mut Input, m: &Member, out: &mut dyn Write) -> Result<u64, Finding> {
    let copied = if m.method == STORED {
        copy_member(input, m, out).map(|()| m.size)
    } else {
        let mut decoder = flate2::read::DeflateDecoder::new(MemberReader {
            input,
            pos: m.data_offset,
            end: m.data_offset + m.size,
        });
        std::io::copy(&mut (&mut decoder).take(m.uncompressed + 1), out)
    };
    let size = copied.map_err(|e| member_fault(m, format!("cannot be read out: {e}")))?;
    if size > m.uncompressed {
        return Err(member_fault(
            m,
            format!(
                "decompresses to more than the {} bytes the central directory says (stopped there)",
                m.uncompressed
            ),
        ));
    }
    if size != m.uncompressed {
        return Err(member_fault(
            m,
            format!(
                "decompresses to {size} bytes where the central directory says {}",
                m.uncompressed
            ),
        ));
    }
    Ok(size)
}

/// A member's bytes as they are in the archive, as a reader.
struct MemberReader<'i> {
    input: &'i mut Input,
    pos: u64,
    end: u64,
}

impl std::io::Read for MemberReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        const CHUNK: u64 = 1 << 16;
        let n = (self.end - self.pos).min(CHUNK).min(buf.len() as u64) as usize;
        if n == 0 {
            return Ok(0);
        }
        buf[..n].copy_from_slice(self.input.bytes(self.pos, n)?);
        self.pos += n as u64;
        Ok(n)
    }
}

/// Writes a member's bytes, as they are in the archive, to `out`, a chunk at a time.
fn copy_member(input: &mut Input, m: &Member, out: &mut dyn Write) -> std::io::Result<()> {
    const CHUNK: u64 = 1 << 20;
    let end = m.data_offset + m.size;
    let mut p = m.data_offset;
    while p < end {
        let n = (end - p).min(CHUNK);
        out.write_all(input.bytes(p, n as usize)?)?;
        p += n;
    }
    Ok(())
}

/// Data offset of a member from its local header, checking it against the central entry.
fn local_data_offset(
    input: &mut Input,
    name: &str,
    method: u16,
    local: u64,
    size: u64,
    central_at: u64,
    notes: &mut Vec<Finding>,
) -> Result<u64, Finding> {
    if local.checked_add(30).is_none_or(|e| e > input.len()) {
        return Err(bad(
            central_at,
            format!("member `{name}`'s local header offset {local} is outside the file"),
        ));
    }
    let h = input
        .bytes(local, 30)
        .map_err(|e| bad(local, e.to_string()))?
        .to_vec();
    if le32(&h, 0) != LOCAL_SIG {
        return Err(bad(
            local,
            format!("no local header for `{name}` where the central directory says"),
        ));
    }
    let (n, x) = (u64::from(le16(&h, 26)), u64::from(le16(&h, 28)));
    let data = local + 30 + n + x;
    if data.checked_add(size).is_none_or(|e| e > input.len()) {
        return Err(bad(
            local,
            format!(
                "member `{name}` ({size} bytes from byte {data}) runs past the end of the file"
            ),
        ));
    }
    let local_name = input
        .bytes(local + 30, n as usize)
        .map_err(|e| bad(local, e.to_string()))?;
    if local_name != name.as_bytes() || le16(&h, 8) != method {
        notes.push(
            Finding::new(
                Severity::Warning,
                LOCAL_CENTRAL_MISMATCH,
                format!(
                    "the local header of `{name}` differs from its central entry (name or method)"
                ),
            )
            .offset(local),
        );
    }
    Ok(data)
}

fn unfinished_or_not_zip(input: &mut Input) -> Result<Layout, Finding> {
    let head = input
        .bytes(0, input.len().min(30 + 16 + 20) as usize)
        .map_err(|e| bad(0, e.to_string()))?
        .to_vec();
    if head.len() >= 30 && le32(&head, 0) == LOCAL_SIG {
        let (n, x) = (le16(&head, 26) as usize, le16(&head, 28) as usize);
        if head.len() >= 30 + n && &head[30..30 + n] == MESSAGES.as_bytes() {
            let data_offset = (30 + n + x) as u64;
            if data_offset <= input.len() {
                return Ok(Layout::Unfinished { data_offset });
            }
        }
        return Err(bad(
            0,
            "a ZIP local header but no end of central directory: the archive is truncated".into(),
        ));
    }
    if head.len() >= 4 && le32(&head, 0) == LOCAL_SIG {
        return Err(bad(0, "no end of central directory record".into()));
    }
    Err(Finding::new(Severity::Error, NOT_ZIP, "not a ZIP archive: no ZIP signatures (a .nanover.zip is a ZIP of messages.msgpack and index.msgpack)"))
}

/// The messages member's local header as NanoVer writes it: zip64 forced, 32-bit sizes
/// saturated, the real sizes in the extra (zero while writing).
pub fn messages_local_header(crc: u32, size: u64) -> Vec<u8> {
    let mut h = local_header(45, crc, MAX32 as u32, MESSAGES, 20);
    h.extend_from_slice(&1u16.to_le_bytes());
    h.extend_from_slice(&16u16.to_le_bytes());
    h.extend_from_slice(&size.to_le_bytes());
    h.extend_from_slice(&size.to_le_bytes());
    h
}

/// Length of [`messages_local_header`]: the messages data starts here.
pub const MESSAGES_DATA_OFFSET: u64 = 30 + 16 + 20;

/// The index member's local header (small, so never zip64).
pub fn index_local_header(crc: u32, size: u32) -> Vec<u8> {
    local_header(20, crc, size, INDEX, 0)
}

fn local_header(version: u16, crc: u32, size: u32, name: &str, extra: u16) -> Vec<u8> {
    let mut h = Vec::with_capacity(30 + name.len());
    h.extend_from_slice(&LOCAL_SIG.to_le_bytes());
    h.extend_from_slice(&version.to_le_bytes());
    h.extend_from_slice(&[0, 0, 0, 0, 0, 0]); // flags, method, DOS time
    h.extend_from_slice(&DOS_DATE.to_le_bytes());
    h.extend_from_slice(&crc.to_le_bytes());
    h.extend_from_slice(&size.to_le_bytes());
    h.extend_from_slice(&size.to_le_bytes());
    h.extend_from_slice(&(name.len() as u16).to_le_bytes());
    h.extend_from_slice(&extra.to_le_bytes());
    h.extend_from_slice(name.as_bytes());
    h
}

/// The central directory and EOCD for `members` (name, crc, size, local offset), written
/// at `cd_offset`, with Python `zipfile`'s zip64 rules.
pub fn central_directory(members: &[(&str, u32, u64, u64)], cd_offset: u64) -> Vec<u8> {
    let mut cd = Vec::new();
    for &(name, crc, size, local) in members {
        let mut extra = Vec::new();
        let mut size32 = size as u32;
        let mut local32 = local as u32;
        if size > MAX32 {
            extra.extend_from_slice(&size.to_le_bytes());
            extra.extend_from_slice(&size.to_le_bytes());
            size32 = MAX32 as u32;
        }
        if local > MAX32 {
            extra.extend_from_slice(&local.to_le_bytes());
            local32 = MAX32 as u32;
        }
        let version: u16 = if name == MESSAGES || !extra.is_empty() {
            45
        } else {
            20
        };
        cd.extend_from_slice(&CENTRAL_SIG.to_le_bytes());
        cd.extend_from_slice(&(0x0300 | version).to_le_bytes()); // made by Unix
        cd.extend_from_slice(&version.to_le_bytes());
        cd.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        cd.extend_from_slice(&DOS_DATE.to_le_bytes());
        cd.extend_from_slice(&crc.to_le_bytes());
        cd.extend_from_slice(&size32.to_le_bytes());
        cd.extend_from_slice(&size32.to_le_bytes());
        cd.extend_from_slice(&(name.len() as u16).to_le_bytes());
        let extra_len = if extra.is_empty() { 0 } else { extra.len() + 4 };
        cd.extend_from_slice(&(extra_len as u16).to_le_bytes());
        cd.extend_from_slice(&[0, 0, 0, 0, 0, 0]); // comment, disk, internal attributes
        cd.extend_from_slice(&0x0180_0000u32.to_le_bytes()); // mode 0600
        cd.extend_from_slice(&local32.to_le_bytes());
        cd.extend_from_slice(name.as_bytes());
        if !extra.is_empty() {
            cd.extend_from_slice(&1u16.to_le_bytes());
            cd.extend_from_slice(&(extra.len() as u16).to_le_bytes());
            cd.extend_from_slice(&extra);
        }
    }
    let cd_size = cd.len() as u64;
    let count = members.len() as u64;
    let zip64 = cd_offset > MAX32 || cd_size > MAX32 || count > 0xFFFF;
    let mut out = cd;
    if zip64 {
        let z = cd_offset + cd_size;
        out.extend_from_slice(&ZIP64_EOCD_SIG.to_le_bytes());
        out.extend_from_slice(&44u64.to_le_bytes());
        out.extend_from_slice(&45u16.to_le_bytes());
        out.extend_from_slice(&45u16.to_le_bytes());
        out.extend_from_slice(&[0; 8]); // disk numbers
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&cd_size.to_le_bytes());
        out.extend_from_slice(&cd_offset.to_le_bytes());
        out.extend_from_slice(&ZIP64_LOCATOR_SIG.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&z.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
    }
    let sat16 = |v: u64| if zip64 { 0xFFFF } else { v as u16 };
    let sat32 = |v: u64| if zip64 { MAX32 as u32 } else { v as u32 };
    out.extend_from_slice(&EOCD_SIG.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&sat16(count).to_le_bytes());
    out.extend_from_slice(&sat16(count).to_le_bytes());
    out.extend_from_slice(&sat32(cd_size).to_le_bytes());
    out.extend_from_slice(&sat32(cd_offset).to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zip64_central_entries_and_eocd() {
        let big = 5u64 << 30;
        let cd = central_directory(
            &[(MESSAGES, 7, big, 0), (INDEX, 9, 1, 66 + big)],
            66 + big + 44,
        );
        // messages entry: zip64 extra with both sizes, 32-bit sizes saturated
        assert_eq!(&cd[20..28], &[0xff; 8]);
        assert_eq!(le16(&cd, 30), 20);
        assert_eq!(le64(&cd, 46 + 16 + 4), big);
        // index entry: offset beyond 4 GiB goes into its extra, version 45
        let second = 46 + 16 + 20;
        assert_eq!(le16(&cd, second + 4), 0x032d);
        assert_eq!(le32(&cd, second + 42), 0xFFFF_FFFF);
        assert_eq!(le64(&cd, second + 46 + 13 + 4), 66 + big);
        // zip64 EOCD record and locator precede a saturated EOCD
        let eocd = cd.len() - 22;
        assert_eq!(le32(&cd, eocd - 20), ZIP64_LOCATOR_SIG);
        assert_eq!(le32(&cd, eocd - 20 - 56), ZIP64_EOCD_SIG);
        assert_eq!(le32(&cd, eocd + 16), 0xFFFF_FFFF);
        assert_eq!(le16(&cd, eocd + 10), 0xFFFF);
    }

    fn deflated(data: &[u8], uncompressed: u64) -> (Input, Member) {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        let bytes = e.finish().unwrap();
        let m = Member {
            name: INDEX.into(),
            method: DEFLATED,
            crc: 0,
            size: bytes.len() as u64,
            uncompressed,
            local_offset: 0,
            data_offset: 0,
        };
        (Input::from_bytes(bytes), m)
    }

    #[test]
    fn a_deflated_member_is_inflated_no_further_than_its_declared_size_plus_one() {
        // 16 MiB of zeros in about 16 KiB, declared as 100 bytes.
        let (mut input, m) = deflated(&vec![0u8; 16 << 20], 100);
        assert!(m.size < 20_000);
        let mut out = Vec::new();
        let e = extract(&mut input, &m, &mut out).unwrap_err();
        assert_eq!(out.len(), 101);
        assert_eq!(e.code, BAD_ZIP_STRUCTURE);
        assert!(
            e.message.contains("more than the 100 bytes"),
            "{}",
            e.message
        );
        // Declared right, it inflates whole; declared too large, it says how much there was.
        let (mut input, m) = deflated(&[7u8; 5000], 5000);
        let mut out = Vec::new();
        assert_eq!(extract(&mut input, &m, &mut out), Ok(5000));
        assert_eq!(out, vec![7u8; 5000]);
        let (mut input, m) = deflated(&[7u8; 5000], 6000);
        let e = extract(&mut input, &m, &mut Vec::new()).unwrap_err();
        assert!(
            e.message.contains("decompresses to 5000 bytes"),
            "{}",
            e.message
        );
    }

    #[test]
    fn small_archives_have_no_zip64_directory() {
        let cd = central_directory(&[(MESSAGES, 0, 0, 0), (INDEX, 0x220d_7cc9, 1, 66)], 110);
        assert_eq!(cd.len(), 121 + 22);
        assert_eq!(le32(&cd, 121), EOCD_SIG);
    }
}

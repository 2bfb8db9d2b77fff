//! Where the four parts are (spec §A1): files of a directory, or members of one ustar
//! archive found with the `tar` crate by seeking from header to header (member data is
//! never read while walking). Small parts are read whole; `dynamic_signals.bin` is handed
//! out as an `Input` and a range, to be streamed.

use std::fs;
use std::io::{Cursor, Read, Seek};
use std::path::Path;

use super::codes::*;
use super::{metadata, schema};
use crate::formats::input::Input;
use crate::report::{Finding, Severity};

pub const STATIC_FILE: &str = "static_signals.bin";
pub const DYNAMIC_FILE: &str = "dynamic_signals.bin";

/// The parts simrec reads, in the order the writer puts them in an archive.
pub const PARTS: [&str; 4] = [schema::FILE, STATIC_FILE, DYNAMIC_FILE, metadata::FILE];

/// Largest `static_signals.bin` read into memory.
pub const MAX_STATIC_BYTES: u64 = 256 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Directory,
    Tar,
}

impl Form {
    pub fn name(self) -> &'static str {
        match self {
            Form::Directory => "directory",
            Form::Tar => "ustar archive",
        }
    }
}

/// A member of the archive (or a file of the directory), for `inspect`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    /// Where its data starts in the archive (0 for a file of a directory).
    pub data_offset: u64,
    pub size: u64,
}

/// The dynamic part: the input holding it and where its bytes are in that input.
pub struct Dynamic {
    pub input: Input,
    pub start: u64,
    pub len: u64,
}

/// What was found of the recording.
pub struct Container {
    pub form: Form,
    pub schema: Option<Vec<u8>>,
    pub statics: Option<Vec<u8>>,
    pub metadata: Option<Vec<u8>>,
    pub dynamic: Option<Dynamic>,
    pub members: Vec<Member>,
    /// Damage and oddities of the container itself (the tar structure, unknown files).
    pub findings: Vec<Finding>,
}

fn tar_error(message: String, offset: u64) -> Finding {
    Finding::new(Severity::Error, TAR, message).offset(offset)
}

fn unknown(name: &str, what: &str) -> Finding {
    Finding::new(
        Severity::Info,
        UNKNOWN_MEMBER,
        format!("{what} {name:?} is not a part of the profile: ignored"),
    )
}

fn too_large(name: &str, size: u64, max: u64) -> Finding {
    Finding::new(
        Severity::Error,
        MISSING_PART,
        format!("{name} has {size} bytes, more than simrec reads for this part ({max}): not read"),
    )
}

/// The most bytes read of a small part.
fn cap(name: &str) -> u64 {
    match name {
        schema::FILE => schema::MAX_BYTES,
        metadata::FILE => metadata::MAX_BYTES,
        _ => MAX_STATIC_BYTES,
    }
}

impl Container {
    fn empty(form: Form) -> Container {
        Container {
            form,
            schema: None,
            statics: None,
            metadata: None,
            dynamic: None,
            members: Vec::new(),
            findings: Vec::new(),
        }
    }

    fn set_small(&mut self, name: &str, bytes: Vec<u8>) {
        match name {
            schema::FILE => self.schema = Some(bytes),
            STATIC_FILE => self.statics = Some(bytes),
            _ => self.metadata = Some(bytes),
        }
    }

    /// The directory form: the files in `dir`.
    pub fn directory(dir: &Path) -> std::io::Result<Container> {
        let mut c = Container::empty(Form::Directory);
        let mut names: Vec<String> = fs::read_dir(dir)?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let path = dir.join(&name);
            if !PARTS.contains(&name.as_str()) || !path.is_file() {
                c.findings.push(unknown(&name, "file"));
                continue;
            }
            let size = fs::metadata(&path)?.len();
            c.members.push(Member {
                name: name.clone(),
                data_offset: 0,
                size,
            });
            if name == DYNAMIC_FILE {
                c.dynamic = Some(Dynamic {
                    input: Input::open(&path)?,
                    start: 0,
                    len: size,
                });
            } else if size > cap(&name) {
                c.findings.push(too_large(&name, size, cap(&name)));
            } else {
                let mut bytes = Vec::with_capacity(size as usize);
                fs::File::open(&path)?
                    .take(cap(&name))
                    .read_to_end(&mut bytes)?;
                c.set_small(&name, bytes);
            }
        }
        Ok(c)
    }

    /// The directory form from bytes in memory (tests, the fuzzer): `None` is a missing part.
    pub fn from_parts(parts: [Option<Vec<u8>>; 4]) -> Container {
        let mut c = Container::empty(Form::Directory);
        let [schema, statics, dynamic, metadata] = parts;
        for (name, part) in [
            (schema::FILE, &schema),
            (STATIC_FILE, &statics),
            (DYNAMIC_FILE, &dynamic),
            (metadata::FILE, &metadata),
        ] {
            if let Some(p) = part {
                c.members.push(Member {
                    name: name.into(),
                    data_offset: 0,
                    size: p.len() as u64,
                });
            }
        }
        c.schema = schema;
        c.statics = statics;
        c.metadata = metadata;
        c.dynamic = dynamic.map(|d| Dynamic {
            len: d.len() as u64,
            start: 0,
            input: Input::from_bytes(d),
        });
        c
    }

    /// The single-file form: the members of the ustar archive `input` (opened again by
    /// `reopen` for the dynamic part's own read window).
    pub fn tar(
        mut input: Input,
        reopen: impl FnOnce() -> std::io::Result<Input>,
    ) -> std::io::Result<Container> {
        let mut c = Container::empty(Form::Tar);
        let len = input.len();
        let mut reader = InputReader {
            input: &mut input,
            pos: 0,
        };
        let (members, mut findings) = walk(&mut reader, len);
        c.findings.append(&mut findings);
        let mut dynamic = None;
        for m in members {
            let available = m.size.min(len.saturating_sub(m.data_offset));
            if m.name == DYNAMIC_FILE {
                dynamic = Some((m.data_offset, available));
            } else if available > cap(&m.name) {
                c.findings.push(too_large(&m.name, available, cap(&m.name)));
            } else {
                let bytes = input.bytes(m.data_offset, available as usize)?.to_vec();
                c.set_small(&m.name, bytes);
            }
            c.members.push(m);
        }
        if let Some((start, len)) = dynamic {
            c.dynamic = Some(Dynamic {
                input: reopen()?,
                start,
                len,
            });
        }
        Ok(c)
    }

    /// The archive offset of the dynamic part's data, in the single-file form.
    pub fn dynamic_archive_offset(&self) -> Option<u64> {
        (self.form == Form::Tar)
            .then(|| self.dynamic.as_ref().map(|d| d.start))
            .flatten()
    }
}

/// `Read + Seek` over an [`Input`], for the `tar` crate's walk.
struct InputReader<'a> {
    input: &'a mut Input,
    pos: u64,
}

impl Read for InputReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (buf.len() as u64).min(self.input.len().saturating_sub(self.pos)) as usize;
        if n == 0 {
            return Ok(0);
        }
        buf[..n].copy_from_slice(self.input.bytes(self.pos, n)?);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for InputReader<'_> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let moved = match to {
            std::io::SeekFrom::Start(p) => Some(p),
            std::io::SeekFrom::End(d) => self.input.len().checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = moved.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek outside the archive")
        })?;
        Ok(self.pos)
    }
}

/// Whether `head` (the first bytes of a file) is a ustar or GNU tar header.
pub fn is_tar(head: &[u8]) -> bool {
    head.get(257..262) == Some(b"ustar")
}

/// The members of an archive of `len` bytes: the parts (last of duplicates kept), and
/// what is wrong with the archive.
fn walk<R: Read + Seek>(reader: R, len: u64) -> (Vec<Member>, Vec<Finding>) {
    let mut members: Vec<Member> = Vec::new();
    let mut found = Vec::new();
    let mut archive = tar::Archive::new(reader);
    let entries = match archive.entries_with_seek() {
        Ok(e) => e,
        Err(e) => {
            found.push(tar_error(format!("not a readable ustar archive: {e}"), 0));
            return (members, found);
        }
    };
    // Where the next header should be, for errors the crate reports without a position.
    let mut next_header = 0u64;
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                found.push(tar_error(
                    format!("damaged archive header near byte {next_header}: {e}; members after it are not read"),
                    next_header,
                ));
                break;
            }
        };
        let header_at = entry.raw_header_position();
        let data_offset = entry.raw_file_position();
        let size = entry.size();
        next_header = data_offset.saturating_add(size.div_ceil(512).saturating_mul(512));
        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let mut name = raw_name.as_str();
        while let Some(rest) = name.strip_prefix("./") {
            name = rest;
        }
        let kind = entry.header().entry_type();
        if kind.is_pax_global_extensions() {
            continue;
        }
        if kind.is_dir() {
            found.push(tar_error(
                format!("member {raw_name:?} is a directory: the profile's archive holds only its four files at top level"),
                header_at,
            ));
            continue;
        }
        if !(kind.is_file() || kind.is_contiguous()) || !PARTS.contains(&name) {
            found.push(unknown(&raw_name, "member").offset(header_at));
            continue;
        }
        if data_offset.saturating_add(size) > len {
            found.push(tar_error(
                format!(
                    "member {name} declares {size} bytes but the archive ends {} bytes into it",
                    len.saturating_sub(data_offset)
                ),
                header_at,
            ));
        }
        let member = Member {
            name: name.to_string(),
            data_offset,
            size,
        };
        if let Some(i) = members.iter().position(|m| m.name == name) {
            found.push(tar_error(
                format!("member {name} appears twice: the later one (at byte {header_at}) is read"),
                header_at,
            ));
            members.remove(i);
        }
        members.push(member);
    }
    (members, found)
}

/// The members of an archive held in memory (tests, the fuzzer).
pub fn walk_bytes(bytes: &[u8]) -> (Vec<Member>, Vec<Finding>) {
    walk(Cursor::new(bytes), bytes.len() as u64)
}

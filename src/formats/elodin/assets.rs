//! `assets.bin`: a postcard list of `(generation, inner bytes)` items (spec §4).
//!
//! Only `entity_metadata` items are decoded (for entity names); every other item stays
//! opaque bytes, and the file is copied through unchanged when a replay is rewritten.

use std::fmt;

/// One item of the store: where its `inner` bytes lie in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    pub generation: u64,
    pub start: usize,
    pub len: usize,
}

/// A decoded item list over the file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assets {
    pub bytes: Vec<u8>,
    pub items: Vec<Item>,
}

/// Why `assets.bin` is not a postcard item list, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at byte {offset}: {message}")]
pub struct AssetsError {
    pub offset: usize,
    pub message: String,
}

fn fail(offset: usize, message: impl Into<String>) -> AssetsError {
    AssetsError {
        offset,
        message: message.into(),
    }
}

/// A LEB128 varint (at most 10 bytes, no overflow past 64 bits) at `*pos`.
pub fn varint(bytes: &[u8], pos: &mut usize) -> Result<u64, AssetsError> {
    let start = *pos;
    let mut value: u64 = 0;
    for i in 0..10 {
        let Some(&b) = bytes.get(*pos) else {
            return Err(fail(start, "the file ends inside a varint"));
        };
        *pos += 1;
        let part = u64::from(b & 0x7f);
        if i == 9 && b > 1 {
            return Err(fail(start, "varint overflows 64 bits"));
        }
        value |= part << (7 * i);
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(fail(start, "varint longer than 10 bytes"))
}

pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

impl Assets {
    /// Decodes the item list; it must end exactly at the end of the file.
    pub fn parse(bytes: Vec<u8>) -> Result<Assets, AssetsError> {
        let mut pos = 0;
        let count = varint(&bytes, &mut pos)?;
        // Every item takes at least two bytes: checked before anything is allocated.
        let room = (bytes.len() - pos) / 2;
        if count > room as u64 {
            return Err(fail(
                0,
                format!(
                    "the store claims {count} items but {} bytes follow (an item takes at least 2)",
                    bytes.len() - pos
                ),
            ));
        }
        let mut items = Vec::with_capacity(count as usize);
        for i in 0..count {
            let at = pos;
            let generation = varint(&bytes, &mut pos)?;
            let len = varint(&bytes, &mut pos)?;
            let left = bytes.len() - pos;
            if len > left as u64 {
                return Err(fail(
                    at,
                    format!("item {i} claims {len} bytes but only {left} remain"),
                ));
            }
            items.push(Item {
                generation,
                start: pos,
                len: len as usize,
            });
            pos += len as usize;
        }
        if pos != bytes.len() {
            return Err(fail(
                pos,
                format!(
                    "{} bytes follow the last of the {count} items",
                    bytes.len() - pos
                ),
            ));
        }
        Ok(Assets { bytes, items })
    }

    /// The empty store: the single byte `00`.
    pub fn empty() -> Assets {
        Assets {
            bytes: vec![0],
            items: Vec::new(),
        }
    }

    pub fn inner(&self, index: usize) -> Option<&[u8]> {
        let item = self.items.get(index)?;
        self.bytes.get(item.start..item.start + item.len)
    }

    /// One store holding every item of `stores`, in order, generations kept.
    pub fn concat(stores: &[Assets]) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, stores.iter().map(|s| s.items.len() as u64).sum());
        for store in stores {
            for item in &store.items {
                put_varint(&mut out, item.generation);
                put_varint(&mut out, item.len as u64);
                out.extend_from_slice(&store.bytes[item.start..item.start + item.len]);
            }
        }
        out
    }

    /// The store with these inner blobs, generation 1 each.
    pub fn encode(inners: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, inners.len() as u64);
        for inner in inners {
            put_varint(&mut out, 1);
            put_varint(&mut out, inner.len() as u64);
            out.extend_from_slice(inner);
        }
        out
    }
}

/// An `entity_metadata` asset: the entity's name and colour.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityMetadata {
    pub name: String,
    pub color: [f32; 3],
}

impl fmt::Display for EntityMetadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)
    }
}

impl EntityMetadata {
    /// `{name: String, color: {r, g, b: f32}}`, consuming `inner` exactly.
    pub fn decode(inner: &[u8]) -> Result<EntityMetadata, AssetsError> {
        let mut pos = 0;
        let len = varint(inner, &mut pos)?;
        let left = inner.len() - pos;
        if len > left as u64 {
            return Err(fail(0, format!("name claims {len} bytes, {left} remain")));
        }
        let name = std::str::from_utf8(&inner[pos..pos + len as usize])
            .map_err(|_| fail(pos, "name is not UTF-8"))?
            .to_string();
        pos += len as usize;
        if inner.len() - pos != 12 {
            return Err(fail(
                pos,
                format!(
                    "{} bytes after the name, not the 12 of an r, g, b colour",
                    inner.len() - pos
                ),
            ));
        }
        let mut color = [0f32; 3];
        for (i, c) in color.iter_mut().enumerate() {
            let at = pos + 4 * i;
            *c = f32::from_le_bytes([inner[at], inner[at + 1], inner[at + 2], inner[at + 3]]);
        }
        Ok(EntityMetadata { name, color })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, self.name.len() as u64);
        out.extend_from_slice(self.name.as_bytes());
        for c in self.color {
            out.extend_from_slice(&c.to_le_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example_item() {
        let bytes = vec![
            0x01, 0x01, 0x11, 0x04, 0x42, 0x61, 0x6c, 0x6c, 0, 0, 0x80, 0x3f, 0, 0, 0x80, 0x3f, 0,
            0, 0x80, 0x3f,
        ];
        let a = Assets::parse(bytes.clone()).unwrap();
        assert_eq!(a.items.len(), 1);
        let e = EntityMetadata::decode(a.inner(0).unwrap()).unwrap();
        assert_eq!(e.name, "Ball");
        assert_eq!(e.color, [1.0; 3]);
        assert_eq!(Assets::encode(&[e.encode()]), bytes);
        assert_eq!(Assets::parse(vec![0]).unwrap().items.len(), 0);
    }

    #[test]
    fn damage_is_reported_not_allocated() {
        assert!(Assets::parse(vec![]).is_err());
        assert!(Assets::parse(vec![0, 0]).is_err());
        assert!(Assets::parse(vec![0xff, 0xff, 0xff, 0xff, 0x0f]).is_err());
        assert!(Assets::parse(vec![1, 1, 5, 0]).is_err());
        assert!(varint(&[0xff; 11], &mut 0).is_err());
        assert!(varint(
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
            &mut 0
        )
        .is_err());
        assert_eq!(
            varint(
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
                &mut 0
            ),
            Ok(u64::MAX)
        );
    }
}

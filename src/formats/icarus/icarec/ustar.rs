//! Writing the single-file form (spec §A1): ustar headers made with the `tar` crate
//! (typeflag 0, magic `ustar\0` version `00`, mode 0644, uid/gid 0, empty user and group
//! names, mtime the schema's `created_at`; sizes of 8 GiB or more in GNU base-256), data
//! padded to 512 bytes, two zero blocks at the end.

use std::io::{self, Write};

pub const BLOCK: u64 = 512;

/// The 512-byte header of member `name` holding `size` bytes.
pub fn header(name: &str, size: u64, mtime: u64) -> io::Result<[u8; 512]> {
    let mut h = tar::Header::new_ustar();
    h.set_path(name)?;
    h.set_size(size);
    h.set_mode(0o644);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(mtime);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_cksum();
    Ok(*h.as_bytes())
}

/// Zero bytes that pad `len` bytes of data to a whole block.
pub fn padding(len: u64) -> usize {
    ((BLOCK - len % BLOCK) % BLOCK) as usize
}

/// Writes a whole member: header, data, padding.
pub fn member(out: &mut dyn Write, name: &str, data: &[u8], mtime: u64) -> io::Result<u64> {
    out.write_all(&header(name, data.len() as u64, mtime)?)?;
    out.write_all(data)?;
    let pad = padding(data.len() as u64);
    out.write_all(&[0u8; BLOCK as usize][..pad])?;
    Ok(BLOCK + data.len() as u64 + pad as u64)
}

/// The end of an archive: two zero blocks.
pub fn end(out: &mut dyn Write) -> io::Result<()> {
    out.write_all(&[0u8; 2 * BLOCK as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_ustar_with_the_profile_fields() {
        let h = header("schema.json", 129, 1_772_366_400).unwrap();
        assert_eq!(&h[..12], b"schema.json\0");
        assert_eq!(&h[100..108], b"0000644\0");
        assert_eq!(&h[108..116], b"0000000\0");
        assert_eq!(&h[124..136], b"00000000201\0");
        assert_eq!(h[156], b'0');
        assert_eq!(&h[257..265], b"ustar\x0000");
        assert!(h[265..297].iter().all(|&b| b == 0), "empty uname");
        // Header checksum: the sum of the bytes with the checksum field as spaces.
        let sum: u32 = h[..148]
            .iter()
            .chain(&h[156..])
            .map(|&b| u32::from(b))
            .sum::<u32>()
            + 8 * 32;
        let field = std::str::from_utf8(&h[148..155]).unwrap();
        assert_eq!(u32::from_str_radix(field, 8).unwrap(), sum);
        // 8 GiB and more: GNU base-256.
        let big = header("dynamic_signals.bin", 1 << 33, 0).unwrap();
        assert_eq!(big[124] & 0x80, 0x80);
        assert_eq!(padding(129), 383);
        assert_eq!(padding(512), 0);
    }
}

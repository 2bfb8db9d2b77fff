//! Packet framing (spec §2, §3): the 16-byte big-endian header, CRC-16/CCITT-FALSE, and
//! building packets.

use crc::{Crc, Table, CRC_16_IBM_3740};

/// `0x03E55E30`, the first four bytes of every packet.
pub const MARKER: [u8; 4] = [0x03, 0xe5, 0x5e, 0x30];
pub const HEADER_LEN: usize = 16;
pub const CRC_LEN: usize = 2;
/// Header flag bit 0: no CRC follows the payload.
pub const FLAG_NO_CRC: u8 = 1;
/// The protocol version simrec writes.
pub const VERSION_MINOR: u16 = 4;

/// CRC-16/CCITT-FALSE (= CRC-16/IBM-3740): poly 0x1021, init 0xFFFF, no reflection.
pub static CRC16: Crc<u16, Table<16>> = Crc::<u16, Table<16>>::new(&CRC_16_IBM_3740);

pub fn crc16(bytes: &[u8]) -> u16 {
    CRC16.checksum(bytes)
}

pub fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// A parsed packet header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketHeader {
    pub version_major: u16,
    pub version_minor: u16,
    pub routing_id: u16,
    pub message_id: u16,
    pub payload_size: u16,
    pub payload_offset: u8,
    pub flags: u8,
}

impl PacketHeader {
    /// Parses 16 bytes; `None` when they do not start with the marker.
    pub fn parse(b: &[u8]) -> Option<PacketHeader> {
        if b.len() < HEADER_LEN || b[..4] != MARKER {
            return None;
        }
        Some(PacketHeader {
            version_major: be16(b, 4),
            version_minor: be16(b, 6),
            routing_id: be16(b, 8),
            message_id: be16(b, 10),
            payload_size: be16(b, 12),
            payload_offset: b[14],
            flags: b[15],
        })
    }

    pub fn no_crc(&self) -> bool {
        self.flags & FLAG_NO_CRC != 0
    }

    /// Header, payload_offset bytes, payload and CRC.
    pub fn packet_len(&self) -> usize {
        HEADER_LEN
            + self.payload_offset as usize
            + self.payload_size as usize
            + if self.no_crc() { 0 } else { CRC_LEN }
    }

    /// Where the payload starts inside the packet.
    pub fn payload_start(&self) -> usize {
        HEADER_LEN + self.payload_offset as usize
    }

    /// The header fields a resync candidate must have (spec §9), apart from size and CRC.
    pub fn plausible(&self) -> bool {
        self.version_major == 0 && self.payload_offset == 0 && self.flags & !FLAG_NO_CRC == 0
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&MARKER);
        for v in [
            self.version_major,
            self.version_minor,
            self.routing_id,
            self.message_id,
            self.payload_size,
        ] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        out.push(self.payload_offset);
        out.push(self.flags);
    }
}

/// Whether a whole packet's stored CRC matches: `Some((stored, computed))` when it does not.
/// `packet` must be `header.packet_len()` bytes.
pub fn crc_mismatch(header: &PacketHeader, packet: &[u8]) -> Option<(u16, u16)> {
    if header.no_crc() || packet.len() < CRC_LEN {
        return None;
    }
    let body = packet.len() - CRC_LEN;
    let stored = be16(packet, body);
    let computed = crc16(&packet[..body]);
    (stored != computed).then_some((stored, computed))
}

/// A complete version-0.4 packet with a fresh CRC. `payload` must be at most 65535 bytes.
pub fn build(routing_id: u16, message_id: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len() + CRC_LEN);
    build_into(&mut out, routing_id, message_id, payload);
    out
}

/// Appends a complete version-0.4 packet with a fresh CRC to `out`.
pub fn build_into(out: &mut Vec<u8>, routing_id: u16, message_id: u16, payload: &[u8]) {
    let start = out.len();
    PacketHeader {
        version_major: 0,
        version_minor: VERSION_MINOR,
        routing_id,
        message_id,
        payload_size: payload.len().min(u16::MAX as usize) as u16,
        payload_offset: 0,
        flags: 0,
    }
    .write(out);
    out.extend_from_slice(&payload[..payload.len().min(u16::MAX as usize)]);
    let crc = crc16(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// Recomputes the CRC of a packet in place after its payload was rewritten (NoCrc kept).
pub fn refresh_crc(packet: &mut [u8]) {
    let Some(h) = PacketHeader::parse(packet) else {
        return;
    };
    if h.no_crc() || packet.len() != h.packet_len() {
        return;
    }
    let body = packet.len() - CRC_LEN;
    let crc = crc16(&packet[..body]);
    packet[body..].copy_from_slice(&crc.to_be_bytes());
}

/// A ServerInfo payload of 48 bytes (spec §6.1, §12).
pub fn server_info_payload(
    time_unit: u64,
    default_frame_time: u32,
    coordinate_frame: u8,
) -> [u8; 48] {
    let mut p = [0u8; 48];
    p[..8].copy_from_slice(&time_unit.to_be_bytes());
    p[8..12].copy_from_slice(&default_frame_time.to_be_bytes());
    p[12] = coordinate_frame;
    p
}

/// A Control payload (spec §6.2).
pub fn control_payload(flags: u32, value32: u32, value64: u64) -> [u8; 16] {
    let mut p = [0u8; 16];
    p[..4].copy_from_slice(&flags.to_be_bytes());
    p[4..8].copy_from_slice(&value32.to_be_bytes());
    p[8..].copy_from_slice(&value64.to_be_bytes());
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn crc_check_values_of_the_spec() {
        assert_eq!(crc16(b"123456789"), 0x29B1);
        let mut si = hex("03e55e30 0000 0004 0001 0000 0030 00 00 00000000000003e8 00000021 00");
        si.extend_from_slice(&[0; 35]);
        assert_eq!(crc16(&si), 0x4C0B);
        let mut si44 = hex("03e55e30 0000 0004 0001 0000 002c 00 00 00000000000003e8 00000021 00");
        si44.extend_from_slice(&[0; 31]);
        assert_eq!(crc16(&si44), 0x28D9);
        let mut fc = hex("03e55e30 0000 0004 0002 0003 0010 00 00");
        fc.extend_from_slice(&[0; 16]);
        assert_eq!(crc16(&fc), 0xF362);
        let fc50 =
            hex("03e55e30 0000 0004 0002 0003 0010 00 00 00000000 00000032 0000000000000000");
        assert_eq!(crc16(&fc50), 0xC107);
        let frame =
            hex("03e55e30 0000 0004 0002 0001 0010 00 00 00000000 00000021 0000000000000000");
        assert_eq!(crc16(&frame), 0x0470);
    }

    #[test]
    fn built_packets_carry_the_check_values() {
        let si = build(1, 0, &server_info_payload(1000, 33, 0));
        assert_eq!(si.len(), 66);
        assert_eq!(&si[64..], &[0x4c, 0x0b]);
        let fc = build(2, 3, &control_payload(0, 0, 0));
        assert_eq!(&fc[32..], &[0xf3, 0x62]);
        let frame = build(2, 1, &control_payload(0, 33, 0));
        assert_eq!(&frame[32..], &[0x04, 0x70]);
        let h = PacketHeader::parse(&frame).unwrap();
        assert_eq!(h.packet_len(), 34);
        assert_eq!(crc_mismatch(&h, &frame), None);
        let mut bad = frame.clone();
        bad[20] ^= 1;
        assert!(crc_mismatch(&h, &bad).is_some());
        refresh_crc(&mut bad);
        assert_eq!(crc_mismatch(&h, &bad), None);
    }
}

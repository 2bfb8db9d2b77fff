//! Arbitrary bytes into the Elodin DB record decoders (`db_state`, `schema`, component,
//! entity and message-log `metadata`, append-log headers, message buffers).
//!
//! Besides panics, aborts (huge allocations) and hangs, the target asserts that what
//! decodes encodes back to bytes that decode to the same value (postcard's varints may be
//! written longer than needed, so the bytes themselves may differ), and that a schema's row
//! size, where it does not overflow, is its elements times its type's size.

#![no_main]

use libfuzzer_sys::fuzz_target;
use simrec::formats::elodin::db::layout::{
    ComponentMetadata, DbState, EntityMetadata, LogHeader, MsgMetadata, Schema, UmbraBuf,
    COMPONENT_LOG_HEADER, MSG_LOG_HEADER,
};

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = DbState::decode(data) {
        assert_eq!(DbState::decode(&s.encode()), Ok(s));
    }
    if let Ok(s) = Schema::decode(data) {
        assert_eq!(Schema::decode(&s.encode()).as_ref(), Ok(&s));
        if let (Some(n), Some(size)) = (s.elements(), s.row_size()) {
            assert_eq!(n * s.prim.size(), size);
        }
    }
    for legacy in [false, true] {
        if let Ok(m) = ComponentMetadata::decode(data, legacy) {
            assert_eq!(ComponentMetadata::decode(&m.encode(), legacy), Ok(m));
        }
    }
    let _ = EntityMetadata::decode(data);
    if let Ok(m) = MsgMetadata::decode(data) {
        assert_eq!(MsgMetadata::decode(&m.encode()).map(|x| x.name), Ok(m.name));
    }
    for size in [MSG_LOG_HEADER, COMPONENT_LOG_HEADER] {
        if let Ok(h) = LogHeader::decode(data, size) {
            assert_eq!(h.encode(), data[..size]);
        }
    }
    if let Some(entry) = data.get(..16) {
        let entry: [u8; 16] = entry.try_into().expect("16 bytes");
        let u = UmbraBuf::decode(&entry);
        assert_eq!(UmbraBuf::decode(&u.encode()), u);
    }
});

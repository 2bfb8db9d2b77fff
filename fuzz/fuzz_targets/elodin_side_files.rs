//! Arbitrary bytes into the Elodin `metadata.json` and `assets.bin` parsers.
//!
//! The input is split at a point chosen by its first two bytes: the part before is
//! `metadata.json`, the part after is `assets.bin` (and each part is also tried as the
//! other file). Besides panics, aborts (huge allocations) and hangs, the target asserts:
//! a parsed store's items lie inside the file, one after another, and end exactly at its
//! end; a decoded entity_metadata re-encodes to its item bytes when its name length was
//! written canonically; parsed metadata has a positive time step and component element
//! counts equal to the product of their shapes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use simrec::formats::elodin::assets::{Assets, EntityMetadata};
use simrec::formats::elodin::metadata;

fn check_assets(bytes: &[u8]) {
    let Ok(a) = Assets::parse(bytes.to_vec()) else {
        return;
    };
    let mut end = 0;
    for (i, item) in a.items.iter().enumerate() {
        assert!(item.start >= end, "items overlap");
        assert!(item.start + item.len <= bytes.len(), "item past the end");
        end = item.start + item.len;
        let inner = a.inner(i).expect("an item's bytes");
        if let Ok(m) = EntityMetadata::decode(inner) {
            let again = m.encode();
            if again.len() == inner.len() {
                assert_eq!(again, inner, "entity_metadata re-encodes");
            }
        }
    }
    assert!(
        a.items.is_empty() || end == bytes.len(),
        "store ends exactly"
    );
}

fn check_metadata(bytes: &[u8]) {
    if let Ok((m, _)) = metadata::parse(bytes) {
        assert!(m.step_ns > 0);
        for a in &m.archetypes {
            assert!(metadata::safe_file_stem(&a.name));
            for c in &a.components {
                let product = c.shape.iter().try_fold(1usize, |x, &d| x.checked_mul(d));
                assert_eq!(product, Some(c.elements));
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        check_assets(data);
        check_metadata(data);
        return;
    }
    let split = usize::from(u16::from_le_bytes([data[0], data[1]])) % (data.len() - 1) + 2;
    let (meta, assets) = data[2..].split_at(split - 2);
    check_metadata(meta);
    check_assets(assets);
    check_metadata(assets);
    check_assets(meta);
});

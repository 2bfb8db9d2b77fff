//! `simrec slice --split-at-resets` against NanoVer's own `nanover-split-recording`, part
//! by part and message by message, for every `.nanover.zip` fixture upstream can split.
//! Upstream's parts are summarised in `fixtures/nanover-zip/split-upstream/manifest.json`
//! (made by `make.sh` beside it): per message its timestamp, length, CRC-32 and, for a
//! state with several removals (written in Python set order), the CRC-32 with them sorted.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use simrec::formats::nanover::zip::msgpack::{self, Encoder, Oddities};
use simrec::formats::nanover::zip::ZipReader;
use simrec::formats::ReadOptions;
use simrec::model::Value;

use crate::util;
use crate::util::{s, simrec};

fn zdir() -> PathBuf {
    util::any_fixture("nanover-zip")
}

/// (timestamp µs, bytes) of every message of a part, read back strictly (so the index
/// agrees with the messages: types, frame.index, offsets, CRC-32).
fn messages(path: &Path) -> Vec<(i64, Vec<u8>)> {
    let reader = ZipReader::open(path, ReadOptions::default()).unwrap();
    let mut out: Vec<(i64, Vec<u8>)> = Vec::new();
    let mut last_group = None;
    for r in reader {
        let r = r.unwrap();
        let same = r.group.is_some() && r.group == last_group;
        last_group = r.group;
        if !same {
            let raw = r.raw.expect("every record carries its message");
            out.push((r.time / 1000, raw.bytes));
        }
    }
    out
}

/// CRC-32 of a message re-packed with its state removals sorted.
fn canonical_crc(bytes: &[u8]) -> u32 {
    let (mut v, _) = msgpack::value(bytes, 0, &mut Oddities::default(), 0).unwrap();
    if let Value::Map(parts) = &mut v {
        for (name, part) in parts.iter_mut() {
            if let (true, Value::Map(fields)) = (name == "state", part) {
                for (k, f) in fields.iter_mut() {
                    if let (true, Value::List(keys)) = (k == "removals", f) {
                        keys.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
                    }
                }
            }
        }
    }
    let mut e = Encoder::new();
    e.value(&v);
    crc32fast::hash(e.as_slice())
}

#[test]
fn split_parts_equal_nanover_split_recording_message_by_message() {
    let manifest: Json = serde_json::from_str(
        &std::fs::read_to_string(zdir().join("split-upstream/manifest.json")).unwrap(),
    )
    .unwrap();
    let mut checked = (0, 0, 0);
    for entry in manifest.as_array().unwrap() {
        let input = entry["input"].as_str().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = format!("{}/", s(dir.path()));
        let run = simrec()
            .args([
                "slice",
                "--split-at-resets",
                s(&zdir().join(input)),
                "-o",
                &out,
            ])
            .output()
            .unwrap();
        assert_eq!(
            run.status.code(),
            Some(0),
            "{input}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let mut mine: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        mine.sort();
        // Upstream writes an empty part -00 when the recording starts with a reset;
        // simrec does not (docs/formats/nanover-zip.md).
        let parts: Vec<&Json> = entry["parts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| !p["messages"].as_array().unwrap().is_empty())
            .collect();
        let names: Vec<&str> = parts.iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(mine, names, "{input}: parts");
        for part in parts {
            let name = part["name"].as_str().unwrap();
            let want = part["messages"].as_array().unwrap();
            let got = messages(&dir.path().join(name));
            assert_eq!(got.len(), want.len(), "{input} {name}: messages");
            for (i, ((ts, bytes), w)) in got.iter().zip(want).enumerate() {
                let what = format!("{input} {name} message {i}");
                assert_eq!(*ts, w[0].as_i64().unwrap(), "{what}: timestamp");
                assert_eq!(bytes.len() as u64, w[1].as_u64().unwrap(), "{what}: length");
                if crc32fast::hash(bytes) == w[2].as_u64().unwrap() as u32 {
                    checked.0 += 1;
                } else {
                    // Only a removals list upstream wrote in set order may differ.
                    let sorted = w[3]
                        .as_u64()
                        .unwrap_or_else(|| panic!("{what}: bytes differ"));
                    assert_eq!(canonical_crc(bytes), sorted as u32, "{what}: content");
                    checked.1 += 1;
                }
            }
            checked.2 += 1;
        }
    }
    // 4,422 messages in 27 parts; one differs from upstream's only in the order of a removals set.
    assert_eq!(checked, (4421, 1, 27));
}

//! The profile's two merge kinds (spec §A14) on `a2.icarec` cut in two: a continuation (one
//! schema, the second input after the first) and a union of disjoint signals on identical
//! times; both give back a2's bytes. Anything else is refused, nothing written.

use std::path::{Path, PathBuf};

use crate::util;
use crate::util::{run_in, s};

fn a2() -> PathBuf {
    util::any_fixture("icarec/a2.icarec")
}

fn read(dir: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap()
}

fn assert_same_blocks(dir: &Path, merged: &str) {
    for part in ["dynamic_signals.bin", "static_signals.bin"] {
        assert_eq!(
            read(dir, &format!("{merged}/{part}")),
            std::fs::read(a2().join(part)).unwrap(),
            "{part}"
        );
    }
    let schema: serde_json::Value =
        serde_json::from_slice(&read(dir, &format!("{merged}/schema.json"))).unwrap();
    assert_eq!(
        schema["checksum"],
        "sha256:dfc5cf06739db1309b73341f945ee3ff0053ce3198ca2f634751d3ee0798efc9"
    );
}

#[test]
fn a_continuation_joins_two_runs_of_one_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let a2 = a2();
    // The second run is rebased (its own epoch, 20 ms later): merge lines it up again.
    run_in(
        dir,
        &["slice", s(&a2), "--end", "0.02", "-o", "early.icarec"],
    )
    .expect_code(0);
    run_in(
        dir,
        &["slice", s(&a2), "--start", "0.02", "-o", "late.icarec"],
    )
    .expect_code(0);
    let r = run_in(
        dir,
        &["merge", "early.icarec", "late.icarec", "-o", "m.icarec"],
    )
    .expect_code(0);
    assert_eq!(r.stderr, "wrote 7 records to m.icarec\n");
    assert_same_blocks(dir, "m.icarec");

    // Overlapping runs are refused.
    let r = run_in(dir, &["merge", s(&a2), "late.icarec", "-o", "x.icarec"]).expect_code(2);
    assert_eq!(
        r.stderr,
        format!(
            "error: late.icarec continues {} but starts at 0.02 s, not after its last frame at \
             0.03 s; cut the first with `simrec slice --end` before merging\n",
            a2.display()
        )
    );
    assert!(!dir.join("x.icarec").exists());
}

#[test]
fn a_union_lays_disjoint_signals_side_by_side() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let a2 = a2();
    run_in(
        dir,
        &[
            "convert",
            s(&a2),
            "--channel",
            "Vehicle.Nav.*",
            "-o",
            "nav.icarec",
        ],
    )
    .expect_code(0);
    run_in(
        dir,
        &[
            "convert",
            s(&a2),
            "--exclude-channel",
            "Vehicle.Nav.*",
            "-o",
            "rest.icarec",
        ],
    )
    .expect_code(0);
    run_in(
        dir,
        &["merge", "nav.icarec", "rest.icarec", "-o", "u.icarec"],
    )
    .expect_code(0);
    assert_same_blocks(dir, "u.icarec");

    // Different times: refused while reading, nothing written.
    run_in(
        dir,
        &[
            "slice",
            "rest.icarec",
            "--end",
            "0.02",
            "-o",
            "rest1.icarec",
        ],
    )
    .expect_code(0);
    let r = run_in(
        dir,
        &["merge", "nav.icarec", "rest1.icarec", "-o", "w.icarec"],
    )
    .expect_code(2);
    assert_eq!(
        r.stderr,
        "error: nav.icarec and rest1.icarec cannot be merged as a union of signals: their frame \
         times differ (0.02 s against the end)\n"
    );
    assert!(!dir.join("w.icarec").exists());

    // Shared signals under different schemas: neither kind.
    let r = run_in(dir, &["merge", "nav.icarec", s(&a2), "-o", "v.icarec"]).expect_code(2);
    assert_eq!(
        r.stderr,
        format!(
            "error: nav.icarec and {} cannot be merged: their schemas differ \
             (sha256:e52a94596ac854cd0399bd9f1f193b7dcb7f5c930bef70d2ec39cf1c5144d5ec and \
             sha256:dfc5cf06739db1309b73341f945ee3ff0053ce3198ca2f634751d3ee0798efc9) and they \
             share signals (Vehicle.Nav.position); a continuation needs the same schema, a union \
             disjoint signals\n",
            a2.display()
        )
    );
}

//! JSON Lines output is pinned byte for byte: the SHA-256 of each conversion below was taken
//! with simrec before the JSON writer was made faster (zmij floats, row-wise arrays), so a
//! change in number text, key order or spacing fails here.

use sha2::{Digest, Sha256};

use crate::util;
use crate::util::run_in;

const PINNED: &[(&[&str], u64, &str)] = &[
    (
        &["nanover-legacy/small.traj", "nanover-legacy/small.state"],
        44027,
        "f84262db5ae9e7ed02fb542bd3912039f8b91bda77cd825fa510ab8e969570db",
    ),
    (
        &[
            "nanover-legacy/upstream/nanotube-example-recording.traj",
            "nanover-legacy/upstream/nanotube-example-recording.state",
        ],
        7321050,
        "8ca14fec9d7312d16f20ed264be418b9e8a271232c36a0d59d5b2fd31cf6ce24",
    ),
    (
        &["nanover-zip/upstream/test_mdanalysis-test_vel_force.nanover.zip"],
        1539651,
        "14c6479eb83c84c4263a5db550e1ba6618d36d5e5b1e0fe7d28bd75ba3060144",
    ),
    (
        &["elodin/types_300"],
        1422813,
        "2661958fb65e1f9aa78ce521d8b662ea59fa2c6340244f1b1eb0d3e4191716a4",
    ),
    (
        &["tes/small_plain.3es"],
        211015,
        "66b992dc032b403117231ed6fcc2cf38be73f2975aca6c90a22d73ccdfc97293",
    ),
    (
        &["icarec/types.icarec"],
        2102,
        "25e510778ff9f1a22f659912c1c6a9292d76cc65bc4e0cbd12c64063f6eb1ad6",
    ),
    (
        &["icarus-hdf5/vulcan.h5"],
        2474531,
        "ff504e625e83ae0dec5b8b78773c791dc90c8e5c6c1a3899f2868363480cc22a",
    ),
    // NaN written as null (exit 3).
    (
        &["nanover-legacy/broken/corrupt-payload.traj"],
        42347,
        "6f1b9059215cbd69fe3badb897587c57f5437038bcdf9e3a7e22f528852cd01c",
    ),
];

#[test]
fn json_lines_bytes_are_unchanged() {
    let fixtures = util::any_fixture("");
    for (inputs, size, sha) in PINNED {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.jsonl");
        let mut args = vec!["convert".to_string()];
        args.extend(
            inputs
                .iter()
                .map(|i| fixtures.join(i).to_string_lossy().into_owned()),
        );
        args.extend(["-o".into(), out.to_string_lossy().into_owned()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = run_in(dir.path(), &args);
        assert!(run.code == 0 || run.code == 3, "{inputs:?}: {}", run.stderr);
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(bytes.len() as u64, *size, "{inputs:?}");
        let got: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(got, *sha, "{inputs:?}");
    }
}

//! `validate REC --against CURRENT` (spec §A12): the compatibility table's rows on the
//! `.icarec` fixtures, with CURRENT a schema.json, an .icarec or an Icarus HDF5 file.

use serde_json::{json, Value};

use crate::util::{any_fixture as fixture, run_in, s};

/// (code, severity) of each finding of one validate --format json line.
fn findings(j: &Value) -> Vec<(String, String)> {
    j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pair(code: &str, severity: &str) -> (String, String) {
    (code.to_string(), severity.to_string())
}

#[test]
fn the_same_schema_is_compatible_by_its_checksum() {
    let tmp = tempfile::tempdir().unwrap();
    let a2 = fixture("icarec/a2.icarec");
    let r = run_in(
        tmp.path(),
        &[
            "validate",
            s(&a2),
            "--against",
            s(&a2.join("schema.json")),
            "--format",
            "json",
        ],
    )
    .expect_code(0);
    let j = &r.json_lines()[0];
    assert_eq!(findings(j), [pair("ICAREC_COMPAT_SAME", "info")]);
    assert_eq!(
        j["findings"][0]["message"],
        "the schemas are the same (sha256:dfc5cf06739db1309b73341f945ee3ff0053ce3198ca2f634751d3ee0798efc9)"
    );
}

#[test]
fn a_changed_type_and_an_added_required_signal_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let a2 = fixture("icarec/a2.icarec");
    // The current model: alpha became a float, dry changed units, a required signal and a
    // defaulted one were added, and Icarus 0.6.0 is still enough.
    let mut current: Value =
        serde_json::from_slice(&std::fs::read(a2.join("schema.json")).unwrap()).unwrap();
    current["checksum"] = json!("sha256:0000");
    current["signals"][1]["type"] = json!("float");
    current["signals"][1]["size"] = json!(4);
    current["signals"][2]["units"] = json!("g");
    let signals = current["signals"].as_array_mut().unwrap();
    signals.push(
        json!({"name": "Vehicle.Ctrl.gain", "type": "double", "lifecycle": "static",
        "offset": 4, "size": 8, "required": true}),
    );
    signals.push(
        json!({"name": "Vehicle.Ctrl.trim", "type": "double", "lifecycle": "static",
        "offset": 12, "size": 8, "default": 0.25}),
    );
    std::fs::write(
        tmp.path().join("current.json"),
        serde_json::to_vec(&current).unwrap(),
    )
    .unwrap();
    let r = run_in(
        tmp.path(),
        &[
            "validate",
            s(&a2),
            "--against",
            "current.json",
            "--format",
            "json",
        ],
    )
    .expect_code(1);
    let j = &r.json_lines()[0];
    assert_eq!(
        findings(j),
        [
            pair("ICAREC_COMPAT_TYPE", "error"),
            pair("ICAREC_COMPAT_UNITS", "warning"),
            pair("ICAREC_COMPAT_MISSING", "error"),
            pair("ICAREC_COMPAT_DEFAULTED", "info"),
        ]
    );
    assert_eq!(
        j["findings"][2]["message"],
        "Vehicle.Ctrl.gain (required, no default) is not in the recording"
    );
    assert_eq!(
        j["findings"][3]["message"],
        "Vehicle.Ctrl.trim is not in the recording: its default 0.25 is used"
    );

    // Text output names the type change.
    let r = run_in(
        tmp.path(),
        &["validate", s(&a2), "--against", "current.json"],
    )
    .expect_code(1);
    assert!(
        r.stdout.contains(
            "error ICAREC_COMPAT_TYPE: Vehicle.Aero.alpha is double (8 bytes) in the recording \
             and float (4 bytes) in the current schema"
        ),
        "{}",
        r.stdout
    );
}

#[test]
fn an_hdf5_file_is_a_current_schema_and_a_nanover_recording_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let a2 = fixture("icarec/a2.icarec");
    let h5 = fixture("icarus-hdf5/small.h5");
    let r = run_in(
        tmp.path(),
        &["validate", s(&a2), "--against", s(&h5), "--format", "json"],
    )
    .expect_code(0);
    assert_eq!(
        findings(&r.json_lines()[0]),
        [
            pair("ICAREC_COMPAT_MISSING_OPTIONAL", "info"),
            pair("ICAREC_COMPAT_MISSING_OPTIONAL", "info"),
            pair("ICAREC_COMPAT_IGNORED", "info"),
            pair("ICAREC_COMPAT_IGNORED", "info"),
            pair("ICAREC_COMPAT_IGNORED", "info"),
        ]
    );
    // The HDF5 file against itself: every signal matches (type, units, lifecycle); only the
    // file's own finding (no epoch) is left.
    let r = run_in(
        tmp.path(),
        &["validate", s(&h5), "--against", s(&h5), "--format", "json"],
    )
    .expect_code(0);
    assert_eq!(
        findings(&r.json_lines()[0]),
        [pair("ICARUS_H5_NO_EPOCH", "info")]
    );

    let traj = fixture("nanover-legacy/small.traj");
    let r = run_in(tmp.path(), &["validate", s(&a2), "--against", s(&traj)]).expect_code(2);
    assert_eq!(
        r.stderr,
        format!(
            "error: --against {0}: {0} is a nanover-legacy recording, which has no schema to \
             check compatibility against (a schema.json, an .icarec or an Icarus HDF5 file has)\n",
            traj.display()
        )
    );
    let r = run_in(
        tmp.path(),
        &[
            "validate",
            s(&traj),
            "--against",
            s(&a2),
            "--format",
            "json",
        ],
    )
    .expect_code(1);
    // The NanoVer file's own info findings, then the one error.
    let found = findings(&r.json_lines()[0]);
    assert_eq!(
        found.iter().filter(|f| f.1 != "info").collect::<Vec<_>>(),
        [&pair("SIMREC_AGAINST_UNSUPPORTED", "error")]
    );
}

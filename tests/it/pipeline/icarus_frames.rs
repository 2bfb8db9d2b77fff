//! Icarus-to-Icarus conversion a frame at a time (`pipeline::frame_copy`): `.icarec` →
//! Icarus HDF5 without a `--channel` goes by frames; `--channel '*'` (which selects every
//! signal) goes the record path. Both outputs are read back with simrec and compared record
//! by record, with the exit codes and what each run printed; real values are checked in the
//! frame path's output; and a recording with two frames of one time and a bool byte of 2
//! (a merged row, a warning) comes out the same both ways.

use std::path::{Path, PathBuf};

use simrec::formats::icarus::hdf5::IcarusH5Reader;
use simrec::formats::{format_named, ReadOptions, Source};
use simrec::model::{Header, Record, Value};
use simrec::pipeline::frame_copy::write_frames;
use simrec::pipeline::WriteRequest;

use crate::util;
use crate::util::{any_fixture, icarec_with_partial_last_frame, run_in, s};

const FIXTURES: [&str; 5] = [
    "a2.icarec",
    "types.icarec",
    "a2.icarec.tar",
    "a2-gnu.icarec.tar",
    "a2-pax.icarec.tar",
];

/// Every record of an HDF5 file, and its header.
fn read_h5(path: &Path) -> (Header, Vec<Record>) {
    let mut reader = IcarusH5Reader::open(path, ReadOptions::default()).unwrap();
    let header = reader.header().clone();
    let records = reader.by_ref().map(|r| r.unwrap()).collect();
    (header, records)
}

/// Converts `input` to `frames.h5` (the frame path) and `records.h5` (`--channel '*'`: the
/// record path) in `dir`, checks that both runs exit alike and print the same (but for the
/// output's name), and that the files hold the same records; returns the frame path's.
fn both_ways(dir: &Path, input: &Path) -> (i32, String, Vec<Record>, Header) {
    let frames = dir.join("frames.h5");
    let records = dir.join("records.h5");
    let a = run_in(dir, &["convert", s(input), "-o", s(&frames)]);
    let b = run_in(
        dir,
        &["convert", s(input), "-o", s(&records), "--channel", "*"],
    );
    assert_eq!(a.code, b.code, "{}\n{}", a.stderr, b.stderr);
    assert_eq!(
        a.stderr.replace("frames.h5", "OUT"),
        b.stderr.replace("records.h5", "OUT"),
        "{}",
        input.display()
    );
    if a.code == 1 {
        assert!(!frames.exists() && !records.exists());
        return (a.code, a.stderr, Vec::new(), Header::new("none", ""));
    }
    let (ha, ra) = read_h5(&frames);
    let (hb, rb) = read_h5(&records);
    assert_eq!(ha.channels, hb.channels, "{}", input.display());
    assert_eq!(ra.len(), rb.len(), "{}", input.display());
    for (x, y) in ra.iter().zip(&rb) {
        // Debug text: a NaN is the same NaN.
        assert_eq!(format!("{x:?}"), format!("{y:?}"), "{}", input.display());
    }
    std::fs::remove_file(&frames).unwrap();
    std::fs::remove_file(&records).unwrap();
    (a.code, a.stderr, ra, ha)
}

#[test]
fn the_frame_path_writes_what_the_record_path_writes_on_every_fixture() {
    let tmp = tempfile::tempdir().unwrap();
    for name in FIXTURES {
        let (code, stderr, records, _) =
            both_ways(tmp.path(), &any_fixture(&format!("icarec/{name}")));
        // Floats widen exactly: not a loss.
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(stderr.contains("float stored as float64"), "{stderr}");
        assert!(!records.is_empty());
    }
}

/// The value of `channel`'s records (by name) in frame order.
fn values<'a>(header: &Header, records: &'a [Record], channel: &str) -> Vec<&'a Value> {
    let id = header
        .channels
        .iter()
        .position(|c| c.name == channel)
        .unwrap() as u32;
    records
        .iter()
        .filter(|r| r.channel == id)
        .map(|r| &r.values[0].1)
        .collect()
}

#[test]
fn the_frame_path_keeps_every_type_of_the_profile() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, stderr, records, header) =
        both_ways(tmp.path(), &any_fixture("icarec/types.icarec"));
    assert_eq!(code, 0);
    assert!(stderr.contains("wrote 20 records"), "{stderr}");
    // 2 frames at 0.5 s and 1 s, every signal in both (static ones held).
    assert_eq!(records.first().unwrap().time, 500_000_000);
    assert_eq!(records.last().unwrap().time, 1_000_000_000);
    let ints = |v: Vec<&Value>| -> Vec<i64> {
        v.iter()
            .map(|v| match v {
                Value::Int(i) => *i,
                other => panic!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(
        ints(values(&header, &records, "Sim.count")),
        [1152921504606846976, -9007199254740993]
    );
    assert_eq!(
        ints(values(&header, &records, "Sim.mode_slot")),
        [-3, 2147483647]
    );
    let bools: Vec<String> = values(&header, &records, "Sim.armed_slot")
        .iter()
        .map(|v| format!("{v:?}"))
        .collect();
    // A bool is an int32 (semantic "boolean"), read back as 0 or 1.
    assert_eq!(bools, ["Int(1)", "Int(0)"]);
    // A float signal widened exactly; a static one held in every frame.
    let gain = values(&header, &records, "Sim.gain");
    assert_eq!(gain.len(), 2);
    // 0.7854 as a float32.
    assert_eq!(
        *gain[0],
        Value::Float(f64::from(f32::from_bits(0x3f49_0ff9)))
    );
    assert_eq!(gain[0], gain[1]);
    // A Vec3<float> is three float64 datasets, `.x` `.y` `.z`.
    let r_y = values(&header, &records, "Body.r.y");
    assert_eq!(*r_y[0], Value::Float(-1.5));
    assert_eq!(*r_y[1], Value::Float(2.0));
}

#[test]
fn frames_of_one_time_and_bool_quirks_come_out_the_same_both_ways() {
    let tmp = tempfile::tempdir().unwrap();
    let src = any_fixture("icarec/types.icarec");
    let rec = tmp.path().join("quirky.icarec");
    std::fs::create_dir(&rec).unwrap();
    for part in ["schema.json", "static_signals.bin"] {
        std::fs::copy(src.join(part), rec.join(part)).unwrap();
    }
    // No metadata.json: a warning, the frames are still read.
    let schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(src.join("schema.json")).unwrap()).unwrap();
    let armed = schema["signals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Sim.armed")
        .unwrap()["offset"]
        .as_u64()
        .unwrap() as usize;
    let mut dynamic = std::fs::read(src.join("dynamic_signals.bin")).unwrap();
    let frame = dynamic.len() / 2;
    // Frame 1 at frame 0's time (one row, its values win) and a bool byte of 2 (true).
    let t0: [u8; 8] = dynamic[..8].try_into().unwrap();
    dynamic[frame..frame + 8].copy_from_slice(&t0);
    dynamic[frame + 8 + armed] = 2;
    // A third frame, later, so that a row follows the merged one.
    let mut third = dynamic[frame..].to_vec();
    third[..8].copy_from_slice(&2.0f64.to_le_bytes());
    dynamic.extend_from_slice(&third);
    std::fs::write(rec.join("dynamic_signals.bin"), &dynamic).unwrap();

    let (code, stderr, records, header) = both_ways(tmp.path(), &rec);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("holds a byte other than 0 or 1"),
        "{stderr}"
    );
    assert!(stderr.contains("is the previous frame's"), "{stderr}");
    // 4 static signals once, 8 dynamic ones in each of the 3 frames.
    assert!(stderr.contains("wrote 28 records"), "{stderr}");
    let times: Vec<i64> = values(&header, &records, "Sim.count")
        .iter()
        .zip(
            records
                .iter()
                .filter(|r| header.channels[r.channel as usize].name == "Sim.count"),
        )
        .map(|(_, r)| r.time)
        .collect();
    assert_eq!(times, [500_000_000, 2_000_000_000]);
    // The merged row holds frame 1's values.
    assert_eq!(
        *values(&header, &records, "Sim.count")[0],
        Value::Int(-9007199254740993)
    );
    assert_eq!(
        format!("{:?}", values(&header, &records, "Sim.armed")[0]),
        "Int(1)"
    );
}

#[test]
fn a_whole_icarec_goes_by_frames_and_a_split_or_dry_run_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let hdf5 = format_named("icarus-hdf5").unwrap();
    let jsonl = format_named("jsonl").unwrap();
    for name in ["a2.icarec", "a2.icarec.tar"] {
        let input: Vec<PathBuf> = vec![any_fixture(&format!("icarec/{name}"))];
        let out = tmp.path().join(format!("{name}.h5"));
        let request = |format, dry_run, split| WriteRequest {
            output: &out,
            format,
            force: false,
            dry_run,
            flags: Default::default(),
            split,
            resample: None,
        };
        let mut progress = |_, _| {};
        for (format, dry_run, split) in [
            (jsonl, false, false),
            (hdf5, true, false),
            (hdf5, false, true),
        ] {
            let r = request(format, dry_run, split);
            assert!(write_frames(&input, ReadOptions::default(), &r, &mut progress).is_none());
            assert!(!out.exists());
        }
        let (written, notes) = write_frames(
            &input,
            ReadOptions::default(),
            &request(hdf5, false, false),
            &mut progress,
        )
        .expect("an .icarec into HDF5 goes by frames");
        let written = written.unwrap();
        assert_eq!(written.report.records, 7);
        assert_eq!(written.paths, std::slice::from_ref(&out));
        assert!(notes.read_findings.iter().all(|(_, f)| f.list().is_empty()));
        let (_, records) = read_h5(&out);
        // 3 frames of a Vec3 (3 datasets), a double and a static float: 15 records.
        assert_eq!(records.len(), 15);
        assert_eq!(records[0].time, 10_000_000);
    }
}

/// A partial last frame is read up to both ways (the same records, exit 3); with
/// `--strict` it fails both ways and leaves nothing.
#[test]
fn a_partial_last_frame_is_read_up_to_both_ways_and_strict_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = icarec_with_partial_last_frame(tmp.path());
    let (code, stderr, records, _) = both_ways(tmp.path(), &rec);
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("the last frame is partial: 10 of its 40 bytes"),
        "{stderr}"
    );
    assert_eq!(records.len(), 15, "the three whole frames");
    for extra in [&[][..], &["--channel", "*"]] {
        let args = [&["convert", "--strict", s(&rec), "-o", "x.h5"][..], extra].concat();
        run_in(tmp.path(), &args).expect_code(1);
    }
    assert_eq!(util::dir_entries(tmp.path()), ["cut.icarec"]);
}

#[test]
fn an_hdf5_file_copied_by_frames_is_the_record_paths_copy() {
    let tmp = tempfile::tempdir().unwrap();
    for name in [
        "escape.h5",
        "noschema.h5",
        "small.h5",
        "unescaped.h5",
        "vulcan.h5",
        "crashed.h5",
    ] {
        let input = any_fixture(&format!("icarus-hdf5/{name}"));
        let (code, stderr, records, _) = both_ways(tmp.path(), &input);
        if name == "crashed.h5" {
            // Read up to the damage both ways: its 1200 whole frames.
            assert_eq!(code, 3, "{name}: {stderr}");
            assert_eq!(records.len(), 2400, "{name}");
            continue;
        }
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(!records.is_empty(), "{name}");
        // Each record carries its frame's time as `/time` stores it.
        assert!(records[0].exact_seconds.is_some(), "{name}: the f64 time");
    }
    // Without a selection, it went by frames.
    let out = tmp.path().join("small.h5");
    let request = WriteRequest {
        output: &out,
        format: format_named("icarus-hdf5").unwrap(),
        force: false,
        dry_run: false,
        flags: Default::default(),
        split: false,
        resample: None,
    };
    let input = vec![any_fixture("icarus-hdf5/small.h5")];
    let (written, _) = write_frames(&input, ReadOptions::default(), &request, &mut |_, _| {})
        .expect("an HDF5 file into HDF5 goes by frames");
    assert_eq!(written.unwrap().report.records, 6);
}

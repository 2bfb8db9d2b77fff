//! Spec §11 and §14: a slice replays to the same aggregate frame and full state at every
//! kept timestamp as its input. Both are folded (`model::Folded`) and compared, for time
//! and frame windows over the small pair and over the nanotube recording, in memory and
//! after writing the slice out as a NanoVer pair and reading it back. Also key selection:
//! records left empty are kept, removals of excluded keys go with them.

use std::path::{Path, PathBuf};

use simrec::formats::nanover::legacy::LegacyWriter;
use simrec::formats::output::Outputs;
use simrec::formats::{ReadError, ReadOptions, Source};
use simrec::model::{Composition, Field, Folded, Header, Nanos, Record, TimeSpec, Value};
use simrec::pipeline::{copy, open_recording, resolve, KeyFilter, Selected, Span, Window};

use crate::util;
use crate::util::fixture;

fn small_pair() -> Vec<PathBuf> {
    vec![fixture("small.traj"), fixture("small.state")]
}

fn nanotube_pair() -> Vec<PathBuf> {
    vec![
        fixture("upstream/nanotube-example-recording.traj"),
        fixture("upstream/nanotube-example-recording.state"),
    ]
}

fn s(seconds: f64) -> Option<TimeSpec> {
    Some(TimeSpec::At((seconds * 1e9).round() as Nanos))
}

fn us(micros: i64) -> Option<TimeSpec> {
    Some(TimeSpec::At(micros * 1000))
}

fn frame(n: u64) -> Option<TimeSpec> {
    Some(TimeSpec::Frame(n))
}

/// The whole recording on one timeline, and its header.
fn read_all(paths: &[PathBuf]) -> (Header, Vec<Record>) {
    let mut source = open_recording(paths, ReadOptions::default()).unwrap();
    let header = source.header().clone();
    let records = source.by_ref().map(|r| r.unwrap()).collect();
    (header, records)
}

/// Resolves the window as `simrec slice` does (a header walk for `#N` and `-Ns`).
fn span_of(paths: &[PathBuf], start: Option<TimeSpec>, end: Option<TimeSpec>) -> Span {
    resolve(start, end, || {
        open_recording(paths, util::read_options(false, false))
    })
    .unwrap()
}

fn window(paths: &[PathBuf], span: Span) -> Window<Box<dyn Source>> {
    Window::new(
        open_recording(paths, ReadOptions::default()).unwrap(),
        span,
        true,
    )
}

fn folded_fields(folded: &[Folded]) -> Vec<Vec<Field>> {
    folded.iter().map(Folded::fields).collect()
}

/// Folds the input up to each kept timestamp t (every record with time <= t) and the
/// slice up to t - t0, and compares the aggregate frame and the full state. Returns how
/// many timestamps were compared.
fn assert_replays(
    header: &Header,
    input: &[Record],
    slice: &[Record],
    span: Span,
    what: &str,
) -> usize {
    let t0 = span.start;
    let compositions: Vec<Composition> = header.channels.iter().map(|c| c.composition).collect();
    let mut kept: Vec<Nanos> = slice.iter().map(|r| r.time + t0).collect();
    kept.dedup();
    assert!(
        kept.windows(2).all(|w| w[0] < w[1]),
        "{what}: slice not in time order"
    );
    let mut folded_in = vec![Folded::default(); compositions.len()];
    let mut folded_slice = vec![Folded::default(); compositions.len()];
    let (mut i, mut j) = (0, 0);
    for &t in &kept {
        if let Some(end) = span.end {
            assert!(t < end, "{what}: a record at {t} is past the end {end}");
        }
        while i < input.len() && input[i].time <= t {
            let r = &input[i];
            folded_in[r.channel as usize].apply(compositions[r.channel as usize], r);
            i += 1;
        }
        while j < slice.len() && slice[j].time + t0 <= t {
            let r = &slice[j];
            folded_slice[r.channel as usize].apply(compositions[r.channel as usize], r);
            j += 1;
        }
        let (a, b) = (folded_fields(&folded_in), folded_fields(&folded_slice));
        for (c, (x, y)) in a.iter().zip(&b).enumerate() {
            if x != y {
                let keys = |f: &[Field]| f.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
                panic!(
                    "{what}: channel {} differs at {t} ns\n input keys {:?}\n slice keys {:?}",
                    header.channels[c].name,
                    keys(x),
                    keys(y)
                );
            }
        }
    }
    assert_eq!(j, slice.len(), "{what}: every slice record folded");
    kept.len()
}

/// What one window gave, for further assertions.
struct Sliced {
    span: Span,
    header: Header,
    input: Vec<Record>,
    slice: Vec<Record>,
    /// Records of the slice before the first kept record (the folded context).
    synthetic: usize,
}

/// Slices, checks spec §11's rules and the replay property, writes the slice out as a
/// NanoVer pair, reads that back and checks it replays the same.
fn check_window(
    paths: &[PathBuf],
    start: Option<TimeSpec>,
    end: Option<TimeSpec>,
    dir: &Path,
    what: &str,
) -> Sliced {
    let span = span_of(paths, start, end);
    let (header, input) = read_all(paths);
    let slice: Vec<Record> = window(paths, span).map(|r| r.unwrap()).collect();
    let t0 = span.start;
    let inside: Vec<&Record> = input
        .iter()
        .filter(|r| r.time >= t0 && span.end.is_none_or(|e| r.time < e))
        .collect();
    // Kept records carry their original bytes; the context is encoded anew.
    let kept: Vec<&Record> = slice.iter().filter(|r| r.raw.is_some()).collect();
    let context: Vec<&Record> = slice.iter().filter(|r| r.raw.is_none()).collect();
    let synthetic = context.len();
    assert_eq!(kept.len(), inside.len(), "{what}: kept records");
    // Kept records are unchanged but for their rebased time.
    for (r, original) in kept.iter().zip(&inside) {
        assert_eq!(r.time, original.time - t0, "{what}: rebased time");
        assert_eq!(
            (&r.values, r.frame, r.channel, &r.raw),
            (
                &original.values,
                original.frame,
                original.channel,
                &original.raw
            ),
            "{what}: a kept record changed"
        );
    }
    // The context: at most one reset frame and one state update, at 0.
    assert!(synthetic <= 2, "{what}: {synthetic} synthetic records");
    let frame_channel =
        |r: &Record| header.channels[r.channel as usize].composition == Composition::FrameDelta;
    for r in &context {
        assert_eq!(r.time, 0, "{what}");
        if frame_channel(r) {
            assert_eq!(r.frame, Some(0), "{what}: the context frame is a reset");
        } else {
            assert!(
                !r.values.is_empty(),
                "{what}: an empty state is not written"
            );
            assert!(r.values.iter().all(|(_, v)| *v != Value::Removed));
        }
    }
    // Synthetic records lead the slice (together, frame first: one message where the
    // output format has combined messages); after them, at time 0 frames come before state.
    assert!(
        slice.iter().take_while(|r| r.time == 0).count() >= synthetic,
        "{what}"
    );
    let context_frames: Vec<bool> = slice.iter().take(synthetic).map(frame_channel).collect();
    assert!(context_frames.windows(2).all(|w| w[0] || !w[1]), "{what}");
    let at_zero: Vec<bool> = slice
        .iter()
        .skip(synthetic)
        .take_while(|r| r.time == 0)
        .map(frame_channel)
        .collect();
    assert!(
        at_zero.windows(2).all(|w| w[0] || !w[1]),
        "{what}: frame first at 0: {at_zero:?}"
    );
    let before = |c: Composition| {
        input
            .iter()
            .any(|r| r.time < t0 && header.channels[r.channel as usize].composition == c)
    };
    let has = |c: Composition| {
        context
            .iter()
            .any(|r| header.channels[r.channel as usize].composition == c)
    };
    let first_frame = inside
        .iter()
        .find(|r| header.channels[r.channel as usize].composition == Composition::FrameDelta);
    let reset_at_t0 = first_frame.is_some_and(|r| r.frame == Some(0) && r.time == t0);
    assert_eq!(
        has(Composition::FrameDelta),
        before(Composition::FrameDelta) && !reset_at_t0,
        "{what}: context frame"
    );
    if !before(Composition::StateDelta) {
        assert!(!has(Composition::StateDelta), "{what}: context state");
    }
    let compared = assert_replays(&header, &input, &slice, span, what);
    assert!(compared > 0, "{what}: nothing kept");

    // The same through the writer (rebased records keep their payload bytes, synthetic
    // ones are encoded) and back through the reader.
    let target = dir.join(format!("{}.traj", what.replace([' ', '#', '.'], "_")));
    let mut outputs = Outputs::new(false);
    let mut source = window(paths, span);
    let sink = Box::new(LegacyWriter::create(&target, source.header(), &mut outputs).unwrap());
    let report = copy(&mut source, sink, &mut |_, _| {}).unwrap();
    assert_eq!(report.records, slice.len() as u64, "{what}");
    assert!(report.loss.is_empty(), "{what}: {:?}", report.loss);
    let written = outputs.commit().unwrap();
    assert_eq!(written.len(), 2, "{what}: a .traj and a .state");
    let (back_header, back) = read_all(&written);
    assert_eq!(back.len(), slice.len(), "{what}: written and read back");
    // A pair reads back on the merged timeline: on equal times, frames first.
    let mut timeline: Vec<&Record> = slice.iter().collect();
    timeline.sort_by_key(|r| (r.time, !frame_channel(r)));
    for (a, b) in back.iter().zip(timeline) {
        assert_eq!(
            (
                a.time,
                a.frame,
                back_header.channels[a.channel as usize].composition
            ),
            (
                b.time,
                b.frame,
                header.channels[b.channel as usize].composition
            ),
            "{what}: read back"
        );
        // Kept records are the original payload bytes under a new record header.
        if let (Some(x), Some(y)) = (&a.raw, &b.raw) {
            assert_eq!(x.bytes[24..], y.bytes[24..], "{what}: payload bytes");
        }
    }
    assert_replays(
        &back_header,
        &input,
        &back,
        span,
        &format!("{what}, read back"),
    );
    Sliced {
        span,
        header,
        input,
        slice,
        synthetic,
    }
}

#[test]
fn small_pair_mid_window() {
    let dir = tempfile::tempdir().unwrap();
    let w = check_window(&small_pair(), s(1.0), s(3.0), dir.path(), "small 1s..3s");
    // Frames before 1 s are folded into one reset; the state before it too.
    assert_eq!(w.synthetic, 2);
    assert_eq!(
        w.span,
        Span {
            start: 1_000_000_000,
            end: Some(3_000_000_000)
        }
    );
    // small.traj records 8..=23 and small.state records 8..=12 are in [1 s, 3 s).
    assert_eq!(w.slice.len(), 2 + 15 + 4);
    // The context frame carries the topology of the first frame (it had frame_index 2).
    let context = &w.slice[0];
    assert!(context.get("particle.names").is_some());
    assert!(context.get("particle.positions").is_some());
    // The context state holds what was set before 1 s, without the removed keys.
    let state = &w.slice[1];
    let keys: Vec<&str> = state.values.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "imd.velocity_reset_available",
            "interaction.ac9c04b2-5376-4de1-95a5-0291a49e19dd",
            "simrec.counter",
            "simrec.nested",
            "simrec.note"
        ]
    );
    assert_eq!(w.input.len(), 47);
}

#[test]
fn small_pair_from_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let w = check_window(&small_pair(), None, s(2.0), dir.path(), "small ..2s");
    assert_eq!(w.synthetic, 0, "nothing before the window");
    assert_eq!(w.slice[0].time, 8_445_000, "times are kept when t0 is 0");
}

#[test]
fn small_pair_window_starting_at_a_reset() {
    // small.traj record 17 is a reset at 2.121956 s: no context frame (it would be
    // discarded at once), but the state before it is still carried.
    let dir = tempfile::tempdir().unwrap();
    let w = check_window(
        &small_pair(),
        us(2_121_956),
        None,
        dir.path(),
        "small at reset 17",
    );
    assert_eq!(w.synthetic, 1);
    // At 0: the kept reset, then the folded state (frame before state).
    assert_eq!(w.slice[0].frame, Some(0));
    assert!(w.slice[0].raw.is_some(), "the reset is the original record");
    let state = &w.slice[1];
    assert_eq!((state.time, state.raw.is_none()), (0, true));
    assert_eq!(w.header.channels[state.channel as usize].name, "state");
}

#[test]
fn small_pair_window_one_microsecond_after_a_reset() {
    let dir = tempfile::tempdir().unwrap();
    let w = check_window(
        &small_pair(),
        us(2_121_957),
        None,
        dir.path(),
        "small after reset 17",
    );
    assert_eq!(w.synthetic, 2);
    // The context frame is the reset's topology: its keys are those of record 17.
    let reset = &w.input.iter().find(|r| r.time == 2_121_956_000).unwrap();
    let mut want: Vec<&str> = reset.values.iter().map(|(k, _)| k.as_str()).collect();
    want.sort_unstable();
    let got: Vec<&str> = w.slice[0].values.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(got, want);
}

#[test]
fn small_pair_frame_windows() {
    let dir = tempfile::tempdir().unwrap();
    let pair = small_pair();
    // #5..#20: small.traj records 5..=19, with the state records in that time range.
    let w = check_window(&pair, frame(5), frame(20), dir.path(), "small #5..#20");
    assert_eq!(w.span.start, 620_608_000);
    assert_eq!(w.span.end, Some(2_608_595_000), "record 20");
    let frames: Vec<i64> = w
        .slice
        .iter()
        .filter(|r| r.raw.is_some())
        .filter_map(|r| r.frame)
        .collect();
    assert_eq!(frames.len(), 15);
    assert_eq!(frames[0], 7, "record 5 has frame_index 7");
    // #17..: from the first reset to the end.
    let w = check_window(&pair, frame(17), None, dir.path(), "small #17..");
    assert_eq!(w.span.start, 2_121_956_000);
    assert_eq!(w.synthetic, 1, "starts at a reset: state context only");
    // #24..#25: one reset frame.
    check_window(&pair, frame(24), frame(25), dir.path(), "small #24..#25");
}

#[test]
fn small_pair_windows_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let pair = small_pair();
    // The last second, from the end of the recording (5.380761 s).
    let w = check_window(
        &pair,
        Some(TimeSpec::FromEnd(1_000_000_000)),
        None,
        dir.path(),
        "small -1s",
    );
    assert_eq!(w.span.start, 4_380_761_000);
    // After the last state record: the folded state still comes along.
    let w = check_window(&pair, s(5.1), None, dir.path(), "small 5.1s..");
    assert_eq!(w.synthetic, 2);
    assert_eq!(w.slice.len(), 3, "context frame, context state, record 31");
    let keys: Vec<&str> = w.slice[1].values.iter().map(|(k, _)| k.as_str()).collect();
    // simrec.counter was removed at 5.004306 s and simrec.note at 1.784330 s.
    assert_eq!(keys, ["imd.velocity_reset_available", "simrec.nested"]);
    // Past the last record: the window holds nothing of the recording, and is refused
    // before its context is made.
    let span = span_of(&pair, s(6.0), None);
    match window(&pair, span).next() {
        Some(Err(e @ ReadError::Conflict(_))) => assert_eq!(
            e.to_string(),
            "the window [6.000000s, the end) lies outside the recording: it holds no record"
        ),
        other => panic!("{:?}", other.map(|r| r.map(|r| r.time))),
    }
}

#[test]
fn small_pair_window_starting_on_a_removal() {
    // small.state record 10 removes simrec.note at exactly t0: the context still has it,
    // and the kept removal takes it out again.
    let dir = tempfile::tempdir().unwrap();
    let w = check_window(
        &small_pair(),
        us(1_784_330),
        us(1_784_331),
        dir.path(),
        "small on removal",
    );
    assert_eq!(w.slice.len(), 3);
    assert!(w.slice[1].get("simrec.note").is_some());
    assert_eq!(
        w.slice[2].values,
        vec![("simrec.note".to_string(), Value::Removed)]
    );
}

#[test]
fn nanotube_windows() {
    let dir = tempfile::tempdir().unwrap();
    let pair = nanotube_pair();
    let w = check_window(&pair, s(10.0), s(20.0), dir.path(), "nanotube 10s..20s");
    assert_eq!(w.synthetic, 2);
    assert_eq!(w.input.len(), 930 + 685);
    check_window(
        &pair,
        frame(100),
        frame(400),
        dir.path(),
        "nanotube #100..#400",
    );
    check_window(&pair, s(30.0), None, dir.path(), "nanotube 30s..");
    // nanover-rs recordings: record 0 is the empty `12 00` reset, record 1 the topology.
    let w = check_window(&pair, frame(1), frame(3), dir.path(), "nanotube #1..#3");
    assert_eq!(w.slice[0].frame, Some(0));
}

// ---- key selection ----

fn filter(include: &[&str], exclude: &[&str]) -> KeyFilter {
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    KeyFilter::new(&v(include), &v(exclude)).unwrap()
}

fn selected(paths: &[PathBuf], f: KeyFilter) -> Vec<Record> {
    Selected::new(open_recording(paths, ReadOptions::default()).unwrap(), f)
        .map(|r| r.unwrap())
        .collect()
}

#[test]
fn excluded_keys_leave_empty_records_in_place() {
    let traj = vec![fixture("small.traj")];
    let (_, input) = read_all(&traj);
    let out = selected(
        &traj,
        filter(
            &[],
            &[
                "particle.*",
                "forces.*",
                "energy.*",
                "system.*",
                "server.*",
                "frame.index",
                "*.count",
                "residue.*",
                "chain.*",
                "bond.*",
            ],
        ),
    );
    assert_eq!(out.len(), 32);
    for (a, b) in out.iter().zip(&input) {
        assert_eq!((a.time, a.frame), (b.time, b.frame), "resets stay resets");
        assert!(a.values.is_empty(), "{:?}", a.values);
        assert!(a.raw.is_none(), "a changed record loses its original bytes");
    }
    // Only energy keys: records keep them in order, untouched records keep their bytes.
    let out = selected(&traj, filter(&["energy.*"], &[]));
    for (a, b) in out.iter().zip(&input) {
        let want: Vec<&Field> = b
            .values
            .iter()
            .filter(|(k, _)| k.starts_with("energy."))
            .collect();
        assert_eq!(a.values.iter().collect::<Vec<_>>(), want);
    }
}

#[test]
fn removals_of_excluded_keys_go_with_them() {
    let state = vec![fixture("small.state")];
    let (header, input) = read_all(&state);
    let out = selected(&state, filter(&[], &["simrec.note", "interaction.*"]));
    assert_eq!(out.len(), 15, "records left empty are kept");
    // Record 10 only removed simrec.note; records 7..=9 only touched the interaction.
    for k in [7, 8, 9, 10] {
        assert!(out[k].values.is_empty(), "record {k}: {:?}", out[k].values);
    }
    let keys: Vec<&str> = out[1].values.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["simrec.nested", "simrec.counter"]);
    assert!(out.iter().all(|r| r.get("simrec.note").is_none()));
    // Untouched records keep their bytes; the removal of simrec.counter is still there.
    assert_eq!(out[2].raw, input[2].raw);
    assert_eq!(
        out[13].values,
        vec![("simrec.counter".to_string(), Value::Removed)]
    );
    // The filtered fold is the input's fold without the excluded keys, at every record.
    let mut a = Folded::default();
    let mut b = Folded::default();
    let composition = header.channels[0].composition;
    for (x, y) in input.iter().zip(&out) {
        a.apply(composition, x);
        assert!(
            b.apply(composition, y).is_empty(),
            "no removal of an absent key"
        );
        let kept: Vec<Field> = a
            .fields()
            .into_iter()
            .filter(|(k, _)| k != "simrec.note" && !k.starts_with("interaction."))
            .collect();
        assert_eq!(b.fields(), kept);
    }
}

#[test]
fn a_filtered_slice_written_out_keeps_its_empty_records() {
    let dir = tempfile::tempdir().unwrap();
    let pair = small_pair();
    let span = span_of(&pair, s(1.0), None);
    let mut f = filter(&["simrec.*", "energy.kinetic"], &["simrec.note"]);
    let target = dir.path().join("filtered.traj");
    let mut outputs = Outputs::new(false);
    let mut source = Selected::new(window(&pair, span), f.clone());
    let sink = Box::new(LegacyWriter::create(&target, source.header(), &mut outputs).unwrap());
    let report = copy(&mut source, sink, &mut |_, _| {}).unwrap();
    let written = outputs.commit().unwrap();
    let (header, back) = read_all(&written);
    assert_eq!(back.len() as u64, report.records);
    // 2 context records, small.traj records 8..=31 and small.state records 8..=14.
    assert_eq!(back.len(), 2 + 24 + 7);
    let frames: Vec<&Record> = back.iter().filter(|r| r.frame.is_some()).collect();
    assert_eq!(frames.len(), 25);
    assert!(frames
        .iter()
        .all(|r| r.values.iter().all(|(k, _)| k == "energy.kinetic")));
    // The resets at 2.121956 s and 3.008374 s are still resets.
    let resets: Vec<Nanos> = frames
        .iter()
        .filter(|r| r.frame == Some(0))
        .map(|r| r.time)
        .collect();
    assert_eq!(resets, [0, 1_121_956_000, 2_008_374_000]);
    // State records that only touched excluded keys are there, empty: the interaction's
    // update and removal (1.267974 s, 1.568436 s), the removal of simrec.note (1.784330 s)
    // and the two imd.velocity_reset_available updates (2.105169 s, 3.003785 s).
    let empty_state: Vec<Nanos> = back
        .iter()
        .filter(|r| r.frame.is_none() && r.values.is_empty())
        .map(|r| r.time)
        .collect();
    assert_eq!(
        empty_state,
        [
            267_974_000,
            568_436_000,
            784_330_000,
            1_105_169_000,
            2_003_785_000
        ]
    );
    // And the filtered slice replays like the filtered input.
    let (_, input) = read_all(&pair);
    let input: Vec<Record> = input
        .into_iter()
        .map(|mut r| {
            f.apply(&mut r);
            r
        })
        .collect();
    assert_replays(&header, &input, &back, span, "filtered slice");
}

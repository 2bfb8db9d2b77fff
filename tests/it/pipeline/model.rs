//! The model's second edition through the pipeline: a channel that appears while reading
//! (merge, selection, window, split and a writer take it in), sample-and-hold values folded
//! per entity into a window that starts later, epochs that line up merged inputs and move
//! with a rebased window, and original bytes dropped when they hold a time that changed.

use std::collections::VecDeque;
use std::path::Path;

use serde_json::Value as Json;

use simrec::formats::{format_named, ReadError, Sink, Source};
use simrec::model::{
    Channel, ChannelKind, Composition, Entity, Epoch, Header, RawBytes, Record, Value,
};
use simrec::pipeline::select::Selection;
use simrec::pipeline::{copy, Merged, Selected, Span, SplitAtResets, Window};
use simrec::report::Findings;

/// A source that yields `records`, declaring channel `late` only when the first record that
/// needs it is read (as a reader that discovers an event type does).
struct Discovering {
    header: Header,
    late: Option<(usize, Channel)>,
    records: VecDeque<Record>,
    read: usize,
}

impl Discovering {
    fn new(header: Header, late: Option<(usize, Channel)>, records: Vec<Record>) -> Self {
        Discovering {
            header,
            late,
            records: records.into(),
            read: 0,
        }
    }
}

impl Iterator for Discovering {
    type Item = Result<Record, ReadError>;
    fn next(&mut self) -> Option<Self::Item> {
        if let Some((at, _)) = &self.late {
            if *at == self.read {
                if let Some((_, c)) = self.late.take() {
                    self.header.add_channel(c);
                }
            }
        }
        self.read += 1;
        self.records.pop_front().map(Ok)
    }
}

impl Source for Discovering {
    fn header(&self) -> &Header {
        &self.header
    }
    fn findings(&self) -> Vec<(&Path, &Findings)> {
        Vec::new()
    }
    fn progress(&self) -> (u64, u64) {
        (0, 0)
    }
}

fn channel(name: &str, composition: Composition) -> Channel {
    Channel::new(name, ChannelKind::Events, composition)
}

fn record(time: i64, channel: u32, key: &str, value: f64) -> Record {
    let mut r = Record::new(time, channel);
    r.values = vec![(key.to_string(), Value::Float(value))];
    r
}

/// One header with a `sensor` (sample-and-hold) channel; `event` (independent) appears at
/// the third record.
fn discovering() -> Discovering {
    let mut h = Header::new("test", "1");
    h.add_channel(channel("sensor", Composition::SampleHold));
    let mut a = record(0, 0, "x", 1.0);
    a.entity = Some(Entity::from("left"));
    let mut b = record(10, 0, "x", 2.0);
    b.entity = Some(Entity::from("right"));
    let c = record(20, 1, "kind", 7.0);
    let mut d = record(30, 0, "x", 3.0);
    d.entity = Some(Entity::from("left"));
    let e = record(40, 1, "kind", 8.0);
    Discovering::new(
        h,
        Some((2, channel("event", Composition::Independent))),
        vec![a, b, c, d, e],
    )
}

fn jsonl_lines(source: &mut dyn Source) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let mut outputs = simrec::formats::output::Outputs::new(false);
    let jsonl = format_named("jsonl").unwrap();
    let sink = jsonl.create(&out, source.header(), &mut outputs).unwrap();
    let report = copy(source, sink, &mut |_, _| {}).unwrap();
    assert!(report.loss.is_empty(), "{:?}", report.loss);
    outputs.commit().unwrap();
    std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_channel_found_mid_stream_reaches_the_writer_through_merge_and_selection() {
    let other = Discovering::new(
        {
            let mut h = Header::new("test", "1");
            h.add_channel(channel("sensor", Composition::SampleHold));
            h
        },
        None,
        vec![record(25, 0, "x", 9.0)],
    );
    let merged = Merged::aligned(vec![Box::new(discovering()), Box::new(other)], false).unwrap();
    let mut selected = Selected::new(
        merged,
        Selection::new(&["*".to_string()], &[], &[]).unwrap(),
    );
    let lines = jsonl_lines(&mut selected);
    let channels: Vec<&str> = lines
        .iter()
        .map(|l| l["channel"].as_str().unwrap())
        .collect();
    assert_eq!(
        channels,
        ["sensor", "sensor", "event", "sensor", "sensor", "event"]
    );
    assert_eq!(lines[2]["values"]["kind"], 7.0);
    assert_eq!(lines[1]["entity"], "right");
    assert_eq!(selected.header().channels.len(), 2);
}

#[test]
fn a_window_that_starts_later_carries_each_entitys_held_value() {
    let mut w = Window::new(
        discovering(),
        Span {
            start: 35,
            end: None,
        },
        true,
    );
    let lines = jsonl_lines(&mut w);
    // The held values at 35: left's latest (3.0, at 30) and right's (2.0), then the event.
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["entity"], "left");
    assert_eq!(lines[0]["values"]["x"], 3.0);
    assert_eq!(lines[0]["time_ns"], 0);
    assert_eq!(lines[1]["entity"], "right");
    assert_eq!(lines[1]["values"]["x"], 2.0);
    assert_eq!(lines[2]["channel"], "event");
    assert_eq!(lines[2]["time_ns"], 5);
}

#[test]
fn a_split_takes_in_a_new_channel_and_opens_parts_with_held_values() {
    let mut h = Header::new("test", "1");
    h.add_channel(channel("frame", Composition::FrameDelta));
    h.add_channel(channel("sensor", Composition::SampleHold));
    let reset = |t: i64| {
        let mut r = record(t, 0, "a", t as f64);
        r.frame = Some(0);
        r
    };
    let mut held = record(5, 1, "x", 4.0);
    held.entity = Some(Entity::Id(3));
    let source = Discovering::new(
        h.clone(),
        Some((3, channel("event", Composition::Independent))),
        vec![reset(0), held, reset(100), record(150, 2, "k", 1.0)],
    );
    let dir = tempfile::tempdir().unwrap();
    let jsonl = format_named("jsonl").unwrap();
    let mut outputs = simrec::formats::output::Outputs::new(false);
    let paths: std::cell::RefCell<Vec<std::path::PathBuf>> = Default::default();
    {
        let split = SplitAtResets::new(&h, |k, header: &Header| {
            let p = dir.path().join(format!("part-{k}.jsonl"));
            paths.borrow_mut().push(p.clone());
            Ok(jsonl.create(&p, header, &mut outputs)? as Box<dyn Sink>)
        });
        let mut source = source;
        copy(&mut source, Box::new(split), &mut |_, _| {}).unwrap();
    }
    outputs.commit().unwrap();
    let part2 = std::fs::read_to_string(&paths.borrow()[1]).unwrap();
    let lines: Vec<serde_json::Value> = part2
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The reset, the held sensor value for entity 3, then the event found mid-stream.
    assert_eq!(lines.len(), 3, "{part2}");
    assert_eq!(lines[0]["frame"], 0);
    assert_eq!(lines[1]["channel"], "sensor");
    assert_eq!(lines[1]["entity"], 3);
    assert_eq!(lines[1]["time_ns"], 0);
    assert_eq!(lines[2]["channel"], "event");
    assert_eq!(lines[2]["time_ns"], 50);
}

fn with_epoch(unix_ns: Option<i64>, times: &[i64]) -> Box<dyn Source> {
    let mut h = Header::new("test", "1");
    h.add_channel(channel("e", Composition::Independent));
    h.origin.epoch = unix_ns.map(|unix_ns| Epoch {
        unix_ns,
        fraction_digits: 3,
    });
    h.origin.system = Some("UTC".into());
    let records = times.iter().map(|&t| record(t, 0, "t", t as f64)).collect();
    Box::new(Discovering::new(h, None, records))
}

#[test]
fn merged_inputs_line_up_on_their_epochs_or_are_refused() {
    const S: i64 = 1_000_000_000;
    let a = with_epoch(Some(1_700_000_000 * S), &[0, 3 * S]);
    let b = with_epoch(Some(1_700_000_002 * S), &[0, 2 * S]);
    let mut merged = Merged::aligned(vec![a, b], false).unwrap();
    assert_eq!(
        merged.header().origin.epoch.unwrap().unix_ns,
        1_700_000_000 * S
    );
    let times: Vec<i64> = merged.by_ref().map(|r| r.unwrap().time).collect();
    assert_eq!(times, [0, 2 * S, 3 * S, 4 * S]);

    let abs = with_epoch(Some(1_700_000_000 * S), &[0]);
    let rel = with_epoch(None, &[0]);
    let refused = Merged::aligned(vec![abs, rel], false).err().unwrap();
    assert!(matches!(refused, ReadError::Conflict(_)), "{refused}");
    assert!(refused.to_string().contains("--align start"), "{refused}");

    let abs = with_epoch(Some(1_700_000_000 * S), &[0, S]);
    let rel = with_epoch(None, &[S / 2]);
    let mut starts = Merged::aligned(vec![abs, rel], true).unwrap();
    assert_eq!(starts.header().origin.epoch, None);
    let times: Vec<i64> = starts.by_ref().map(|r| r.unwrap().time).collect();
    assert_eq!(times, [0, S / 2, S]);
}

#[test]
fn a_rebased_window_moves_the_epoch_and_drops_bytes_that_hold_the_old_time() {
    const S: i64 = 1_000_000_000;
    let mut h = Header::new("test", "1");
    h.add_channel(channel("e", Composition::Independent));
    h.origin.epoch = Some(Epoch {
        unix_ns: 1_700_000_000 * S,
        fraction_digits: 0,
    });
    let mut inside = record(2 * S, 0, "t", 2.0);
    inside.raw = Some(Box::new(RawBytes {
        time_inside: true,
        ..RawBytes::new("icarec", vec![1, 2, 3])
    }));
    let mut outside = record(3 * S, 0, "t", 3.0);
    outside.raw = Some(Box::new(RawBytes::new("nanover-legacy", vec![4])));
    let source = Discovering::new(h, None, vec![inside, outside]);
    let mut w = Window::new(
        source,
        Span {
            start: 2 * S,
            end: None,
        },
        true,
    );
    assert_eq!(
        w.header().origin.epoch.unwrap().iso8601(),
        "2023-11-14T22:13:22Z"
    );
    let out: Vec<Record> = w.by_ref().map(Result::unwrap).collect();
    assert_eq!(out[0].time, 0);
    assert_eq!(out[0].raw, None);
    assert_eq!(out[1].time, S);
    assert_eq!(out[1].raw.as_ref().unwrap().bytes, [4]);
}

/// How the late field reaches the Elodin writer.
#[derive(PartialEq)]
enum Late {
    /// Declared by the source, the sink fed directly.
    Declared,
    /// Not declared, the sink fed directly (no look-ahead).
    Undeclared,
    /// Not declared, written through `pipeline::write` (which reads ahead).
    LookedAhead,
}

/// Writes `source` as an Elodin replay at `out`: through `pipeline::write` (which reads
/// ahead to complete field specs), or straight into the writer's sink.
fn write_elodin(
    source: &mut dyn Source,
    out: &Path,
    through_pipeline: bool,
) -> simrec::formats::WriteReport {
    let elodin = format_named("elodin").unwrap();
    if through_pipeline {
        let request = simrec::pipeline::WriteRequest {
            output: out,
            format: elodin,
            force: false,
            dry_run: false,
            flags: Default::default(),
            split: false,
            resample: None,
        };
        let selection = Default::default();
        return simrec::pipeline::write(source, &[], request, &selection, &mut |_, _| {})
            .unwrap()
            .report;
    }
    let mut outputs = simrec::formats::output::Outputs::new(false);
    let sink = elodin
        .create(out, &source.header().clone(), &mut outputs)
        .unwrap();
    let report = copy(source, sink, &mut |_, _| {}).unwrap();
    outputs.commit().unwrap();
    report
}

/// Elodin archetype `body` written from records whose first tick carries only `x`; `v`
/// comes later. The loss report and the written components.
fn elodin_from_late_field(late: Late) -> (Vec<(String, String, String)>, String) {
    let declare = late == Late::Declared;
    use simrec::model::{DType, FieldSpec};
    let mut h = Header::new("test", "1");
    let mut body = Channel::new("body", ChannelKind::Signals, Composition::SampleHold);
    if declare {
        body.fields = vec![
            FieldSpec::typed("x", DType::F64, &[]),
            FieldSpec::typed("v", DType::F64, &[3]),
        ];
    }
    h.add_channel(body);
    let step = 10_000_000;
    let mut records = Vec::new();
    for tick in 0..4i64 {
        let mut r = record(tick * step, 0, "x", tick as f64);
        r.frame = Some(tick);
        if tick >= 2 {
            r.values.push((
                "v".into(),
                Value::Array(simrec::model::Array::flat(simrec::model::ArrayData::F64(
                    vec![1.0, 2.0, 3.0],
                ))),
            ));
        }
        records.push(r);
    }
    let mut source = Discovering::new(h.clone(), None, records);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("replay/");
    let report = write_elodin(&mut source, &out, late == Late::LookedAhead);
    let meta = std::fs::read_to_string(out.join("metadata.json"))
        .or_else(|_| std::fs::read_to_string(out.join("world/metadata.json")))
        .unwrap();
    let losses = report
        .loss
        .entries()
        .map(|(c, f, why, _)| (c.to_string(), f.to_string(), why.to_string()))
        .collect();
    (losses, meta)
}

#[test]
fn a_writer_lays_out_declared_fields_the_first_record_lacks() {
    let late = "first seen after the channel's first tick: not written";
    let (losses, meta) = elodin_from_late_field(Late::Undeclared);
    assert!(
        losses
            .iter()
            .any(|(c, f, why)| c == "body" && f == "v" && why == late),
        "{losses:?}"
    );
    assert!(!meta.contains("\"v\""), "{meta}");
    for how in [Late::Declared, Late::LookedAhead] {
        let (losses, meta) = elodin_from_late_field(how);
        assert!(
            !losses.iter().any(|(_, f, why)| f == "v" && why == late),
            "{losses:?}"
        );
        assert!(
            meta.contains(r#"{"name":"v","component_type":{"primitive_ty":"F64","shape":[3]}"#),
            "{meta}"
        );
    }
}

#[test]
fn a_record_on_a_channel_nobody_declared_is_an_error_not_a_panic() {
    let mut h = Header::new("test", "1");
    h.add_channel(channel("e", Composition::Independent));
    let source = Discovering::new(h, None, vec![record(0, 5, "x", 1.0)]);
    let mut merged = Merged::aligned(vec![Box::new(source)], false).unwrap();
    let err = merged.next().unwrap().unwrap_err();
    assert!(matches!(err, ReadError::Unsupported(_)), "{err:?}");
    assert!(
        err.to_string()
            .ends_with("a record names channel 5 that its reader never declared"),
        "{err}"
    );
}

/// `discovering()` written as an Elodin replay, read back: the header and the (time,
/// channel, entity, value) rows of `sensor` and `event`. Through `pipeline::write` the
/// look-ahead meets `event` before the writer starts; fed directly, the writer is told of
/// it mid-stream.
/// A row read back: time, channel, entity, value.
type Row = (i64, u32, Option<String>, f64);

fn elodin_of_discovering(through_pipeline: bool) -> (Header, Vec<Row>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("replay/");
    let mut source = discovering();
    let report = write_elodin(&mut source, &out, through_pipeline);
    assert_eq!(report.records, 5);
    let back = simrec::formats::registry::open(&out, Default::default()).unwrap();
    let header = back.header().clone();
    let rows = back
        .map(Result::unwrap)
        .filter(|r| r.channel < 2)
        .map(|r| {
            let v = match &r.values[0].1 {
                Value::Array(simrec::model::Array {
                    data: simrec::model::ArrayData::F64(v),
                    ..
                }) => v[0],
                other => panic!("{other:?}"),
            };
            (r.time, r.channel, r.entity.map(|e| e.to_string()), v)
        })
        .collect();
    (header, rows)
}

#[test]
fn elodin_takes_in_a_channel_found_mid_stream_and_names_named_entities() {
    for through_pipeline in [false, true] {
        let (header, rows) = elodin_of_discovering(through_pipeline);
        let channels: Vec<&str> = header.channels.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            channels,
            [
                "sensor",
                "event",
                "system_globals",
                "asset_handle_entity_metadata"
            ]
        );
        let entities = &header.metadata["elodin"]["entities"];
        // `sensor`'s records all name an entity: its own entity has no rows and no name.
        assert_eq!(entities["0"], Json::Null);
        if through_pipeline {
            assert_eq!(entities["1"], "event");
            assert_eq!(entities["2"], "Globals");
        } else {
            // The channels known at the start keep ids 0.. and Globals follows; a channel
            // announced later takes its own range.
            assert_eq!(entities["1"], "Globals");
            assert_eq!(entities[(1u64 << 47).to_string()], "event");
        }
        assert_eq!(entities[(1u64 << 48).to_string()], "left");
        // `right` first shows after the first tick: it cannot join (reported as loss).
        assert_eq!(entities[((1u64 << 48) + 1).to_string()], Json::Null);
        // Five ticks (0, 10, …, 40 ns); `left` holds its last value; `event` repeats its
        // first value before its first record (reported as loss).
        let values =
            |r: &[(i64, u32, Option<String>, f64)]| r.iter().map(|r| r.3).collect::<Vec<_>>();
        assert_eq!(
            values(&rows),
            [1.0, 7.0, 1.0, 7.0, 1.0, 7.0, 3.0, 7.0, 3.0, 8.0],
            "{rows:?}"
        );
        assert_eq!(rows[9].0, 40);
    }
}

//! `simrec cat`: records to standard output, for people or as NDJSON.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use super::common::ReadArgs;
use super::Outcome;
use crate::formats::jsonl::JsonlWriter;
use crate::formats::Sink;
use crate::model::{Header, Record, Seconds, Value};
use crate::pipeline::open_recording;

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
enum CatFormat {
    /// One line per record with a short description of each value
    #[default]
    Text,
    /// One JSON object per record (the `jsonl` format)
    Ndjson,
}

/// Print records to standard output in time order
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  simrec cat small.traj small.state | head\n  \
    simrec cat --format ndjson small.state | jq -c '.removed // empty'"
)]
pub struct Args {
    /// Input files; several are merged by time
    #[arg(required = true, value_name = "IN")]
    inputs: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    format: CatFormat,
    #[command(flatten)]
    read: ReadArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut source = open_recording(&args.inputs, args.read.options(true, false))?;
    match args.format {
        CatFormat::Ndjson => {
            let out = BufWriter::with_capacity(1 << 20, Box::new(io::stdout()) as Box<dyn Write>);
            let mut sink = Box::new(JsonlWriter::new(out, Path::new("-"), source.header()));
            for record in source.by_ref() {
                sink.write(&record?)?;
            }
            sink.finish()?;
        }
        CatFormat::Text => {
            let header = source.header().clone();
            let mut out = BufWriter::new(io::stdout().lock());
            for record in source.by_ref() {
                writeln!(out, "{}", describe(&header, &record?))?;
            }
            out.flush()?;
        }
    }
    Ok(Outcome::Ok)
}

/// `0.008445s frame #2 reset: particle.positions=float32[21,3] energy.kinetic=0.52 …`
fn describe(header: &Header, r: &Record) -> String {
    let channel = header
        .channel(r.channel)
        .map(|c| c.name.as_str())
        .unwrap_or("?");
    let mut s = format!("{} {channel}", Seconds(r.time));
    if let Some(f) = r.frame {
        s.push_str(&format!(" #{f}"));
        if f == 0 {
            s.push_str(" reset");
        }
    }
    s.push(':');
    for (k, v) in &r.values {
        s.push_str(&format!(" {k}={}", short(v)));
    }
    s
}

fn short(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Removed => "<removed>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(x) => x.to_string(),
        Value::Str(s) if s.chars().count() <= 40 => format!("{s:?}"),
        Value::Str(s) => format!("{:?}…", s.chars().take(40).collect::<String>()),
        Value::Array(a) => format!(
            "{}[{}]",
            a.dtype(),
            a.shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
        Value::List(l) => format!("[{} items]", l.len()),
        Value::Map(m) => format!("{{{} keys}}", m.len()),
    }
}

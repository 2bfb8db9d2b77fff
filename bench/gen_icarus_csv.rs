//! Writes a large CSV in the shape of an Icarus export but with full-precision values (the
//! source a `convert … -o out.csv` has to format): `time` at dt = 0.01 s and COLS signals
//! `Vehicle.s<k>.x|y|z` whose values are results of arithmetic (16–17 significant digits,
//! written as the shortest text that reads back exactly, like pandas or numpy would).
//!
//! Usage: gen_icarus_csv OUT.csv ROWS COLS

use std::fs::File;
use std::io::{BufWriter, Write};

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (out, rows, cols) = match &args[..] {
        [_, out, rows, cols] => (
            out,
            rows.parse().unwrap_or(0u64),
            cols.parse().unwrap_or(0usize),
        ),
        _ => {
            eprintln!("usage: gen_icarus_csv OUT.csv ROWS COLS");
            std::process::exit(2);
        }
    };
    let mut w = BufWriter::with_capacity(1 << 20, File::create(out)?);
    write!(w, "time")?;
    for k in 0..cols {
        write!(w, ",Vehicle.s{}.{}", k / 3, ["x", "y", "z"][k % 3])?;
    }
    writeln!(w)?;
    let mut ryu = ryu::Buffer::new();
    for i in 1..=rows {
        let t = i as f64 * 0.01;
        w.write_all(ryu.format(t).trim_end_matches(".0").as_bytes())?;
        for k in 0..cols {
            let x = (t * (k as f64 + 1.0) * 0.7).sin() * 1234.5678 / (k as f64 + 3.0);
            w.write_all(b",")?;
            w.write_all(ryu.format(x).as_bytes())?;
        }
        writeln!(w)?;
    }
    w.flush()
}

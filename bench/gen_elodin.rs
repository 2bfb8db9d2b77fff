//! Generates an Elodin replay for the benchmark: `body` with N bodies × T ticks (ticks
//! 0..T), written like Elodin 0.10 (FixedSizeList columns with the Arrow schema embedded,
//! ZSTD, tick-major), plus `system_globals`, `asset_handle_entity_metadata`,
//! `metadata.json` and `assets.bin`.
//!
//! Usage: cargo run --release --example gen_elodin -- OUT_DIR [BODIES] [TICKS]

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::types::{Float64Type, UInt64Type};
use arrow_array::{ArrayRef, FixedSizeListArray, PrimitiveArray, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545F4914F6CDD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn list(values: Vec<f64>, n: i32) -> ArrayRef {
    let item = Arc::new(Field::new("item", DataType::Float64, true));
    let v = PrimitiveArray::<Float64Type>::from(values);
    Arc::new(FixedSizeListArray::new(item, n, Arc::new(v), None))
}

fn u64s(v: Vec<u64>) -> ArrayRef {
    Arc::new(PrimitiveArray::<UInt64Type>::from(v))
}

fn writer(path: &Path, schema: Arc<Schema>) -> ArrowWriter<File> {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    ArrowWriter::try_new(File::create(path).unwrap(), schema, Some(props)).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let out = Path::new(args.get(1).expect("OUT_DIR"));
    let bodies: u64 = args.get(2).map_or(2000, |s| s.parse().unwrap());
    let ticks: u64 = args.get(3).map_or(600, |s| s.parse().unwrap());
    std::fs::create_dir_all(out).unwrap();
    let comps: [(&str, i32); 5] = [
        ("world_pos", 7),
        ("world_vel", 6),
        ("world_accel", 6),
        ("force", 6),
        ("inertia", 7),
    ];
    let item = Arc::new(Field::new("item", DataType::Float64, true));
    let mut fields: Vec<Field> = comps
        .iter()
        .map(|(n, k)| Field::new(*n, DataType::FixedSizeList(item.clone(), *k), true))
        .collect();
    fields.push(Field::new("tick", DataType::UInt64, true));
    fields.push(Field::new("entity_id", DataType::UInt64, true));
    let schema = Arc::new(Schema::new(fields));
    let mut w = writer(&out.join("body.parquet"), schema.clone());
    let mut rng = Rng(0x9E3779B97F4A7C15);
    // Per body state: position and velocity (a random walk), so values vary like a run.
    let mut state: Vec<[f64; 13]> = (0..bodies)
        .map(|_| {
            let mut s = [0.0; 13];
            for x in s.iter_mut() {
                *x = rng.next() - 0.5;
            }
            s
        })
        .collect();
    let per_batch_ticks = (65_536 / bodies).max(1);
    let mut t = 0;
    while t <= ticks {
        let tn = per_batch_ticks.min(ticks + 1 - t);
        let rows = (tn * bodies) as usize;
        let mut cols: Vec<Vec<f64>> = comps
            .iter()
            .map(|(_, k)| Vec::with_capacity(rows * *k as usize))
            .collect();
        let mut tick_col = Vec::with_capacity(rows);
        let mut ent_col = Vec::with_capacity(rows);
        for tick in t..t + tn {
            for (b, s) in state.iter_mut().enumerate() {
                for x in s.iter_mut() {
                    *x += (rng.next() - 0.5) * 1e-3;
                }
                let n = (s[0] * s[0] + s[1] * s[1] + s[2] * s[2] + s[3] * s[3]).sqrt();
                cols[0].extend([s[0] / n, s[1] / n, s[2] / n, s[3] / n, s[4], s[5], s[6]]);
                cols[1].extend(&s[7..13]);
                // Accelerations and forces at f32 precision, inertia constant: these
                // compress, as real ones do.
                cols[2].extend(s[7..13].iter().map(|x| (x * 9.81) as f32 as f64));
                cols[3].extend([0.0, 0.0, 0.0, 0.0, 0.0, -9.81]);
                cols[4].extend([1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
                tick_col.push(tick);
                ent_col.push(b as u64);
            }
        }
        let mut arrays: Vec<ArrayRef> = cols
            .into_iter()
            .zip(comps.iter())
            .map(|(v, (_, k))| list(v, *k))
            .collect();
        arrays.push(u64s(tick_col));
        arrays.push(u64s(ent_col));
        w.write(&RecordBatch::try_new(schema.clone(), arrays).unwrap())
            .unwrap();
        t += tn;
    }
    w.close().unwrap();
    // system_globals: simulation_tick, simulation_time_step for the Globals entity.
    let gid = bodies;
    let gs = Arc::new(Schema::new(vec![
        Field::new("simulation_tick", DataType::UInt64, true),
        Field::new("simulation_time_step", DataType::Float64, true),
        Field::new("tick", DataType::UInt64, true),
        Field::new("entity_id", DataType::UInt64, true),
    ]));
    let mut g = writer(&out.join("system_globals.parquet"), gs.clone());
    let n = (ticks + 1) as usize;
    g.write(
        &RecordBatch::try_new(
            gs,
            vec![
                u64s((0..=ticks).collect()),
                Arc::new(PrimitiveArray::<Float64Type>::from(vec![0.008333333; n])),
                u64s((0..=ticks).collect()),
                u64s(vec![gid; n]),
            ],
        )
        .unwrap(),
    )
    .unwrap();
    g.close().unwrap();
    let f64c = |name: &str, k: usize| {
        format!(
            r#"{{"name":"{name}","component_type":{{"primitive_ty":"F64","shape":[{k}]}},"tags":null,"asset":false}}"#
        )
    };
    let body: Vec<String> = comps.iter().map(|(n, k)| f64c(n, *k as usize)).collect();
    let meta = format!(
        r#"{{"archetypes":{{"body":[{}],"system_globals":[{{"name":"simulation_tick","component_type":{{"primitive_ty":"U64","shape":[]}},"tags":null,"asset":false}},{{"name":"simulation_time_step","component_type":{{"primitive_ty":"F64","shape":[]}},"tags":null,"asset":false}}]}},"sim_time_step":0.008333333,"run_time_step":0.008333333,"default_playback_speed":1.0,"max_ticks":{ticks}}}"#,
        body.join(",")
    );
    std::fs::write(out.join("metadata.json"), meta).unwrap();
    std::fs::write(out.join("assets.bin"), [0u8]).unwrap();
    let size = std::fs::metadata(out.join("body.parquet")).unwrap().len();
    println!(
        "{}: body.parquet {size} bytes, {bodies} bodies x {} ticks",
        out.display(),
        ticks + 1
    );
}

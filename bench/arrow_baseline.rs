//! Baseline for bench/elodin.sh: decode every column of a Parquet file with arrow-rs
//! alone (single thread, 8,192-row batches), no per-row work. Usage: arrow_baseline FILE
fn main() {
    let path = std::env::args().nth(1).expect("FILE");
    let file = std::fs::File::open(&path).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .with_batch_size(8192)
        .build()
        .unwrap();
    let mut rows = 0;
    for b in reader {
        rows += b.unwrap().num_rows();
    }
    println!("{rows} rows");
}

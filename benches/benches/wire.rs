//! Wire costs: LEB128 varints of every encoded length, and length-prefixed strings.
//!
//! Each iteration writes (into one reused `NetWriter`) or reads (with a fresh `NetReader` over
//! prepared bytes) a batch of `WIRE_BATCH` (256) values of the same encoded length, or 64
//! strings; the counters divide by the batch, so times are per value (per string).
//!
//! Run: `cargo bench -p mf-net-benches --bench wire`.

use divan::counter::{BytesCount, ItemsCount};
use divan::{black_box, AllocProfiler, Bencher};
use mf_net::prelude::*;
use mf_net_benches::{ascii_string, varint_u32_values, varint_u64_values, WIRE_BATCH};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

/// Strings per iteration of the string benchmarks.
const STRINGS: usize = 64;

/// Varints; the argument is the encoded length in bytes.
#[divan::bench_group(sample_count = 1000, min_time = 0.5, max_time = 3)]
mod varint {
    use super::*;

    #[divan::bench(args = [1, 2, 3, 4, 5])]
    fn write_u32(bencher: Bencher<'_, '_>, bytes: u32) {
        let values = varint_u32_values(bytes, WIRE_BATCH);
        let mut w = NetWriter::with_capacity(WIRE_BATCH * 5);
        bencher
            .counter(ItemsCount::new(WIRE_BATCH))
            .bench_local(|| {
                w.clear();
                for &v in black_box(&values) {
                    w.write_var_u32(v);
                }
                w.len()
            });
    }

    #[divan::bench(args = [1, 2, 3, 4, 5])]
    fn read_u32(bencher: Bencher<'_, '_>, bytes: u32) {
        let mut w = NetWriter::new();
        for v in varint_u32_values(bytes, WIRE_BATCH) {
            w.write_var_u32(v);
        }
        let data = w.into_vec();
        bencher
            .counter(ItemsCount::new(WIRE_BATCH))
            .bench_local(|| {
                let mut r = NetReader::new(black_box(&data));
                let mut sum = 0u32;
                for _ in 0..WIRE_BATCH {
                    sum = sum.wrapping_add(r.read_var_u32().expect("valid varint"));
                }
                sum
            });
    }

    #[divan::bench(args = [1, 3, 5, 8, 10])]
    fn write_u64(bencher: Bencher<'_, '_>, bytes: u32) {
        let values = varint_u64_values(bytes, WIRE_BATCH);
        let mut w = NetWriter::with_capacity(WIRE_BATCH * 10);
        bencher
            .counter(ItemsCount::new(WIRE_BATCH))
            .bench_local(|| {
                w.clear();
                for &v in black_box(&values) {
                    w.write_var_u64(v);
                }
                w.len()
            });
    }

    #[divan::bench(args = [1, 3, 5, 8, 10])]
    fn read_u64(bencher: Bencher<'_, '_>, bytes: u32) {
        let mut w = NetWriter::new();
        for v in varint_u64_values(bytes, WIRE_BATCH) {
            w.write_var_u64(v);
        }
        let data = w.into_vec();
        bencher
            .counter(ItemsCount::new(WIRE_BATCH))
            .bench_local(|| {
                let mut r = NetReader::new(black_box(&data));
                let mut sum = 0u64;
                for _ in 0..WIRE_BATCH {
                    sum = sum.wrapping_add(r.read_var_u64().expect("valid varint"));
                }
                sum
            });
    }
}

/// Strings (varint length + UTF-8 bytes); the argument is the string length in bytes. Reading
/// borrows (`read_str` checks UTF-8 and allocates nothing).
#[divan::bench_group(sample_count = 1000, min_time = 0.5, max_time = 3)]
mod string {
    use super::*;

    #[divan::bench(args = [8, 64, 1024])]
    fn write(bencher: Bencher<'_, '_>, len: usize) {
        let strings: Vec<String> = (0..STRINGS).map(|_| ascii_string(len)).collect();
        let mut w = NetWriter::with_capacity(STRINGS * (len + 2));
        bencher
            .counter(ItemsCount::new(STRINGS))
            .counter(BytesCount::new(STRINGS * len))
            .bench_local(|| {
                w.clear();
                for s in black_box(&strings) {
                    w.write_str(s);
                }
                w.len()
            });
    }

    #[divan::bench(args = [8, 64, 1024])]
    fn read(bencher: Bencher<'_, '_>, len: usize) {
        let mut w = NetWriter::new();
        for _ in 0..STRINGS {
            w.write_str(&ascii_string(len));
        }
        let data = w.into_vec();
        bencher
            .counter(ItemsCount::new(STRINGS))
            .counter(BytesCount::new(STRINGS * len))
            .bench_local(|| {
                let mut r = NetReader::new(black_box(&data));
                let mut total = 0usize;
                for _ in 0..STRINGS {
                    total += r.read_str().expect("valid string").len();
                }
                total
            });
    }
}

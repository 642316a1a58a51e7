//! Replication costs for 100, 1000 and 10 000 boxes, with every box moving (`all_changed`) and
//! 10 % of them moving (`ten_percent_changed`), next to the bitcode reference.
//!
//! In each group:
//!
//! - `capture`: server change detection over **all** boxes (compare every member with its
//!   shadow, copy and stamp the changed ones); counted per box scanned;
//! - `encode`: one client's entries for the changed boxes — varint net id, varint length,
//!   `write_since` — into one reused `NetWriter`; counted per changed box;
//! - `decode_apply`: a client reads those entries and applies them to its boxes; counted per
//!   changed box;
//! - `bitcode_encode` / `bitcode_decode`: the reference — the changed boxes' values as plain
//!   structs, the whole `Vec` encoded / decoded at once with a reused `bitcode::Buffer`;
//!   counted per box.
//!
//! The snapshot-level benchmarks (`encode_snapshot`, `decode_snapshot` with acks and
//! interpolation buffering) join these groups when the snapshot encoder lands with the
//! `Multiplayer`: add them as functions next to `encode` / `decode_apply` below.
//!
//! Run: `cargo bench -p mf-net-benches --bench replication`.

use divan::counter::ItemsCount;
use divan::{black_box, AllocProfiler, Bencher};
use mf_net::prelude::*;
use mf_net_benches::{decode_apply, Motion, PlainBox, ReplicationScenario, BOX_COUNTS};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

fn bench_capture(bencher: Bencher<'_, '_>, boxes: usize, motion: Motion) {
    let mut scenario = ReplicationScenario::new(boxes, motion);
    bencher
        .counter(ItemsCount::new(boxes))
        .bench_local(|| scenario.capture());
}

fn bench_encode(bencher: Bencher<'_, '_>, boxes: usize, motion: Motion) {
    let mut scenario = ReplicationScenario::new(boxes, motion);
    scenario.capture();
    let mut w = NetWriter::new();
    scenario.encode(&mut w);
    bencher
        .counter(ItemsCount::new(scenario.changed()))
        .bench_local(|| {
            w.clear();
            black_box(&scenario).encode(&mut w)
        });
}

fn bench_decode_apply(bencher: Bencher<'_, '_>, boxes: usize, motion: Motion) {
    let mut scenario = ReplicationScenario::new(boxes, motion);
    scenario.capture();
    let mut w = NetWriter::new();
    scenario.encode(&mut w);
    let bytes = w.into_vec();
    let mut client = scenario.client_boxes();
    bencher
        .counter(ItemsCount::new(scenario.changed()))
        .bench_local(|| {
            decode_apply(black_box(&bytes), &mut client).expect("the entries are valid")
        });
}

fn changed_plain(boxes: usize, motion: Motion) -> Vec<PlainBox> {
    let mut scenario = ReplicationScenario::new(boxes, motion);
    scenario.capture();
    scenario.changed_plain()
}

fn bench_bitcode_encode(bencher: Bencher<'_, '_>, boxes: usize, motion: Motion) {
    let plain = changed_plain(boxes, motion);
    let mut buffer = bitcode::Buffer::new();
    buffer.encode(&plain);
    bencher
        .counter(ItemsCount::new(plain.len()))
        .bench_local(|| buffer.encode(black_box(&plain)).len());
}

fn bench_bitcode_decode(bencher: Bencher<'_, '_>, boxes: usize, motion: Motion) {
    let plain = changed_plain(boxes, motion);
    let mut buffer = bitcode::Buffer::new();
    let bytes = buffer.encode(&plain).to_vec();
    let _: Vec<PlainBox> = buffer.decode(&bytes).expect("valid bitcode");
    bencher
        .counter(ItemsCount::new(plain.len()))
        .bench_local(|| {
            let decoded: Vec<PlainBox> = buffer.decode(black_box(&bytes)).expect("valid bitcode");
            decoded
        });
}

/// Every box moves every frame.
#[divan::bench_group(sample_count = 1000, min_time = 0.5, max_time = 3)]
mod all_changed {
    use super::*;

    const MOTION: Motion = Motion::All;

    #[divan::bench(args = BOX_COUNTS)]
    fn capture(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_capture(bencher, boxes, MOTION);
    }

    #[divan::bench(args = BOX_COUNTS)]
    fn encode(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_encode(bencher, boxes, MOTION);
    }

    #[divan::bench(args = BOX_COUNTS)]
    fn decode_apply(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_decode_apply(bencher, boxes, MOTION);
    }

    #[divan::bench(args = BOX_COUNTS)]
    fn bitcode_encode(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_bitcode_encode(bencher, boxes, MOTION);
    }

    #[divan::bench(args = BOX_COUNTS)]
    fn bitcode_decode(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_bitcode_decode(bencher, boxes, MOTION);
    }
}

/// One box in ten moves every frame (a different tenth each frame).
#[divan::bench_group(sample_count = 1000, min_time = 0.5, max_time = 3)]
mod ten_percent_changed {
    use super::*;

    const MOTION: Motion = Motion::TenPercent;

    #[divan::bench(args = BOX_COUNTS)]
    fn capture(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_capture(bencher, boxes, MOTION);
    }

    #[divan::bench(args = BOX_COUNTS)]
    fn encode(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_encode(bencher, boxes, MOTION);
    }

    #[divan::bench(args = BOX_COUNTS)]
    fn decode_apply(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_decode_apply(bencher, boxes, MOTION);
    }

    #[divan::bench(args = BOX_COUNTS)]
    fn bitcode_encode(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_bitcode_encode(bencher, boxes, MOTION);
    }

    #[divan::bench(args = BOX_COUNTS)]
    fn bitcode_decode(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_bitcode_decode(bencher, boxes, MOTION);
    }
}

//! Replication costs for 100, 1000 and 10 000 boxes, with every box moving (`all_changed`) and
//! 10 % of them moving (`ten_percent_changed`), next to the bitcode reference.
//!
//! In each group, entry level (the per-entity work, no runtime around it):
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
//! Snapshot level (the `Multiplayer` runtime, one server and one client; the transport takes
//! no part: it counts what is sent and lends what is received, no copy):
//!
//! - `encode_snapshot`: the server's frame on a network tick with one ready client whose
//!   snapshot carries the changed boxes: `begin_frame` (nothing to receive) + `end_frame`
//!   (despawn check, timeouts, capture of **every** box — none changed since the last tick —,
//!   the snapshot: header, flags, per changed box net id, a 1-byte length placeholder and
//!   `write_since` straight into the packet, the length patched in, the ring entry, the
//!   terminator; stats). Counted per changed box;
//! - `decode_snapshot`: the client's frame receiving that snapshot (a new tick each time):
//!   `begin_frame` (the bus copies the packet and checks the header; per entry the client finds
//!   the node by net id, reads and applies the state; queues the ack) + `end_frame` (encodes
//!   and sends the ack, stats). Counted per changed box;
//! - `decode_snapshot_interpolated`: the same with the box's position and rotation
//!   `#[replicated(interpolate)]` (default interpolation settings): the client pushes them into
//!   each node's interpolation buffer instead of applying them, and the frame blends every box
//!   at the render time. Counted per changed box.
//!
//! And in the `idle` group, `server_frame`: the same server frame with nothing changed since
//! the client's ack (the 9-byte idle snapshot), counted per box: the per-tick cost that
//! `encode_snapshot` pays whatever changed. `encode_snapshot − idle/server_frame` is the
//! snapshot's own cost.
//!
//! Run: `cargo bench -p mf-net-benches --bench replication`.

use divan::counter::ItemsCount;
use divan::{black_box, AllocProfiler, Bencher};
use mf_net::prelude::*;
use mf_net_benches::{
    decode_apply, sized, BenchBox, BoxEntity, DecodeSnapshotFixture, EncodeSnapshotFixture,
    InterpBox, Motion, PlainBox, ReplicationScenario, BOX_COUNTS,
};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

/// Boxes when the binary runs as a test (see [`mf_net_benches::running_as_test`]).
const TINY_BOXES: usize = 100;

fn bench_capture(bencher: Bencher<'_, '_>, boxes: usize, motion: Motion) {
    let boxes = sized(boxes, TINY_BOXES);
    let mut scenario = ReplicationScenario::new(boxes, motion);
    bencher
        .counter(ItemsCount::new(boxes))
        .bench_local(|| scenario.capture());
}

fn bench_encode(bencher: Bencher<'_, '_>, boxes: usize, motion: Motion) {
    let boxes = sized(boxes, TINY_BOXES);
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
    let boxes = sized(boxes, TINY_BOXES);
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

fn bench_encode_snapshot(bencher: Bencher<'_, '_>, boxes: usize, motion: Motion) {
    let boxes = sized(boxes, TINY_BOXES);
    let mut fixture = EncodeSnapshotFixture::new(boxes, motion);
    bencher
        .counter(ItemsCount::new(fixture.changed()))
        .bench_local(|| fixture.server_frame());
}

fn bench_decode_snapshot<T: BenchBox>(bencher: Bencher<'_, '_>, boxes: usize, motion: Motion) {
    let boxes = sized(boxes, TINY_BOXES);
    let mut fixture = DecodeSnapshotFixture::<T>::new(boxes, motion);
    bencher
        .counter(ItemsCount::new(fixture.changed()))
        .bench_local(|| fixture.client_frame());
}

fn changed_plain(boxes: usize, motion: Motion) -> Vec<PlainBox> {
    let boxes = sized(boxes, TINY_BOXES);
    let mut scenario = ReplicationScenario::new(boxes, motion);
    scenario.capture();
    scenario.changed_plain()
}

fn bench_bitcode_encode(bencher: Bencher<'_, '_>, boxes: usize, motion: Motion) {
    let boxes = sized(boxes, TINY_BOXES);
    let plain = changed_plain(boxes, motion);
    let mut buffer = bitcode::Buffer::new();
    buffer.encode(&plain);
    bencher
        .counter(ItemsCount::new(plain.len()))
        .bench_local(|| buffer.encode(black_box(&plain)).len());
}

fn bench_bitcode_decode(bencher: Bencher<'_, '_>, boxes: usize, motion: Motion) {
    let boxes = sized(boxes, TINY_BOXES);
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
    fn encode_snapshot(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_encode_snapshot(bencher, boxes, MOTION);
    }

    #[divan::bench(args = BOX_COUNTS)]
    fn decode_snapshot(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_decode_snapshot::<BoxEntity>(bencher, boxes, MOTION);
    }

    #[divan::bench(args = BOX_COUNTS)]
    fn decode_snapshot_interpolated(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_decode_snapshot::<InterpBox>(bencher, boxes, MOTION);
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
    fn encode_snapshot(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_encode_snapshot(bencher, boxes, MOTION);
    }

    #[divan::bench(args = BOX_COUNTS)]
    fn decode_snapshot(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_decode_snapshot::<BoxEntity>(bencher, boxes, MOTION);
    }

    #[divan::bench(args = BOX_COUNTS)]
    fn decode_snapshot_interpolated(bencher: Bencher<'_, '_>, boxes: usize) {
        bench_decode_snapshot::<InterpBox>(bencher, boxes, MOTION);
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

/// Nothing changed since the client's ack.
#[divan::bench_group(sample_count = 1000, min_time = 0.5, max_time = 3)]
mod idle {
    use super::*;

    /// One server frame (a network tick) sending the idle snapshot; counted per box scanned.
    #[divan::bench(args = BOX_COUNTS)]
    fn server_frame(bencher: Bencher<'_, '_>, boxes: usize) {
        let boxes = sized(boxes, TINY_BOXES);
        let mut fixture = EncodeSnapshotFixture::idle(boxes);
        bencher
            .counter(ItemsCount::new(boxes))
            .bench_local(|| fixture.server_frame());
    }
}

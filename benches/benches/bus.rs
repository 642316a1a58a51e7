//! Message bus costs for one `PlayerInput` message (21 payload bytes + 7 header bytes).
//!
//! - `encode`: a client bus sends the message into a loopback transport — header + encode into
//!   the bus's reused writer, copy into a pooled packet — flushes it, and the raw receiving
//!   transport drains it (handing the buffer back to the pool);
//! - `decode_dispatch`: a server bus polls one packet from a transport that only lends the
//!   prepared bytes, checks the header, decodes the message on the stack and calls the handler;
//! - `round_trip`: client bus → loopback → server bus (dispatch, echo) → loopback → client bus
//!   (dispatch): two messages, two dispatches.
//!
//! Run: `cargo bench -p mf-net-benches --bench bus`.

use divan::counter::ItemsCount;
use divan::{black_box, AllocProfiler, Bencher};
use mf_net_benches::{sample_input, DispatchFixture, RoundTripFixture, SendFixture};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 1000, min_time = 0.5, max_time = 3)]
fn encode(bencher: Bencher<'_, '_>) {
    let mut fixture = SendFixture::new();
    let input = sample_input(42);
    bencher
        .counter(ItemsCount::new(1usize))
        .bench_local(|| fixture.send(black_box(&input)));
}

#[divan::bench(sample_count = 1000, min_time = 0.5, max_time = 3)]
fn decode_dispatch(bencher: Bencher<'_, '_>) {
    let mut fixture = DispatchFixture::new();
    bencher
        .counter(ItemsCount::new(1usize))
        .bench_local(|| fixture.dispatch_one());
}

#[divan::bench(sample_count = 1000, min_time = 0.5, max_time = 3)]
fn round_trip(bencher: Bencher<'_, '_>) {
    let mut fixture = RoundTripFixture::new();
    let input = sample_input(42);
    bencher
        .counter(ItemsCount::new(1usize))
        .bench_local(|| fixture.round_trip(black_box(&input)));
}

//! The secure layer's cost per packet, next to the plain path: one unreliable packet of 32, 200
//! or 1200 payload bytes from a client to the server over loopback — send, flush, poll —
//! `plain` (loopback alone) or `secure` (through `SecureClient` and `SecureServer`: sealed with
//! ChaCha20-Poly1305 on the client, its replay window checked and opened on the server). The
//! difference is the layer's cost (seal + open + bookkeeping); it adds 25 bytes per packet.
//! `issue_token` is a backend's cost to create one connect token (fresh keys from the system's
//! generator, the private part sealed with XChaCha20-Poly1305).
//!
//! `requests` is the server's cost per first packet of a connecting peer, 64 at a time: random
//! bytes, a replayed valid request (the token opens, keys are derived, a challenge is sealed and
//! sent), a forged header (refused before any cryptography), and a genuine client's whole
//! handshake (request, challenge, answer, admission; both ends' work).
//!
//! Run: `cargo bench -p mf-net-benches --bench secure`.

use divan::counter::{BytesCount, ItemsCount};
use divan::{black_box, AllocProfiler, Bencher};
use mf_net_benches::secure::{issuer, PacketFixture, Request, RequestFlood, NOW};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [32, 200, 1200];

#[divan::bench(args = SIZES, sample_count = 1000, min_time = 0.5, max_time = 3)]
fn plain(bencher: Bencher<'_, '_>, size: usize) {
    let mut fixture = PacketFixture::plain(size);
    bencher
        .counter(BytesCount::new(size))
        .bench_local(|| black_box(fixture.one_packet()));
}

#[divan::bench(args = SIZES, sample_count = 1000, min_time = 0.5, max_time = 3)]
fn secure(bencher: Bencher<'_, '_>, size: usize) {
    let mut fixture = PacketFixture::secure(size);
    bencher
        .counter(BytesCount::new(size))
        .bench_local(|| black_box(fixture.one_packet()));
}

#[divan::bench(sample_count = 200, min_time = 0.5, max_time = 3)]
fn issue_token(bencher: Bencher<'_, '_>) {
    let issuer = issuer();
    let servers = ["enet:203.0.113.7:27615".parse().expect("an address")];
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        issuer
            .issue(black_box(7), b"account:7 name:ann", &servers, NOW)
            .expect("a token")
    });
}

const REQUESTS: [Request; 4] = [
    Request::Random,
    Request::ForgedHeader,
    Request::Replayed,
    Request::Genuine,
];

#[divan::bench(args = REQUESTS, sample_count = 100, min_time = 0.5, max_time = 3)]
fn requests(bencher: Bencher<'_, '_>, kind: Request) {
    bencher
        .counter(ItemsCount::new(64usize))
        .with_inputs(|| RequestFlood::new(kind, 64))
        .bench_local_refs(|flood| black_box(flood.run()));
}

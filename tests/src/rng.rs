//! A small deterministic generator (xorshift64*) for seeded tests, and the draws the seeded
//! chaos tests share.

use std::time::Duration;

use mf_net::replication::SnapshotEncoding;
use mf_net::transport::simulated::NetworkConditions;

use crate::harness::World;

/// xorshift64*: the same sequence for the same seed, on every machine.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// A generator for test seed `seed` (mixed, so that nearby seeds start far apart; never the
    /// all-zero state xorshift cannot leave).
    pub fn seeded(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (0 for `n` = 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// `true` with a chance of `percent` in 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// The seeds a seeded chaos test runs: `default`, or with `CHAOS_SEEDS=n` in the environment,
/// `n` seeds from `CHAOS_FROM` (default 0) instead (in release, for thousands:
/// `CHAOS_SEEDS=20000 cargo test --release -p mf-net-tests --test prediction_chaos`).
pub fn chaos_seeds(default: impl IntoIterator<Item = u64>) -> Vec<u64> {
    let var = |name| std::env::var(name).ok().and_then(|s| s.parse::<u64>().ok());
    match var("CHAOS_SEEDS") {
        Some(n) => {
            let from = var("CHAOS_FROM").unwrap_or(0);
            (from..from + n).collect()
        }
        None => default.into_iter().collect(),
    }
}

/// A random bad link for a seeded chaos test, or a perfect one a quarter of the time: loss up
/// to 40 %, duplication and reordering up to 20 %, latency up to 200 ms, jitter up to 60 ms.
pub fn chaos_link(rng: &mut Rng) -> Option<NetworkConditions> {
    match rng.below(4) {
        0 => None,
        _ => Some(NetworkConditions {
            loss: rng.below(40) as f32 / 100.0,
            duplication: rng.below(20) as f32 / 100.0,
            latency: Duration::from_millis(rng.below(200)),
            jitter: Duration::from_millis(rng.below(60)),
            reorder: rng.below(20) as f32 / 100.0,
        }),
    }
}

/// Either snapshot encoding, at random.
pub fn chaos_encoding(rng: &mut Rng) -> SnapshotEncoding {
    match rng.chance(50) {
        true => SnapshotEncoding::Bits,
        false => SnapshotEncoding::Bytes,
    }
}

/// One frame of a seeded chaos test: the server's, then every client's not stalled, the
/// frame's length drawn (20 to 50 ms). `stalls` holds each client's frames left to stall
/// (0: none): a stalled client runs no frame until its stall ends, then one as long as thirty
/// frames.
pub fn chaos_frame(world: &mut World, stalls: &mut [u64], rng: &mut Rng) {
    let dt = Duration::from_millis(20 + rng.below(30));
    world.server.begin_frame(dt);
    world.server.end_frame();
    for (client, stall) in world.clients.iter_mut().zip(stalls) {
        let dt = match *stall {
            0 => dt,
            1 => dt * 30,
            _ => {
                *stall -= 1;
                continue;
            }
        };
        *stall = 0;
        client.begin_frame(dt);
        client.end_frame();
    }
}

/// A seeded chaos test's clients come and go: one joins (2 % of the time, up to five), one
/// leaves (1 %, never the last: its index is returned), one stalls (`stall.0` %, for up to
/// `stall.1` frames). `stalls` holds each client's frames left to stall (see [`chaos_frame`]).
pub fn chaos_roster(
    world: &mut World,
    stalls: &mut Vec<u64>,
    rng: &mut Rng,
    stall: (u64, u64),
) -> Option<usize> {
    if rng.chance(2) && world.clients.len() < 5 {
        world.connect_client();
        stalls.push(0);
    }
    let mut left = None;
    if rng.chance(1) && world.clients.len() > 1 {
        let c = rng.below(world.clients.len() as u64) as usize;
        world.clients.remove(c).stop();
        stalls.remove(c);
        left = Some(c);
    }
    if rng.chance(stall.0) {
        let c = rng.below(stalls.len() as u64) as usize;
        stalls[c] = rng.below(stall.1);
    }
    left
}

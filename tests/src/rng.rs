//! A small deterministic generator (xorshift64*) for seeded tests.

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

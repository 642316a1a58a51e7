//! [`IntHasher`]: a hasher for the runtime's own integers (cells, slots, node ids) as map keys.

use std::hash::Hasher;

/// Hashes integers by multiply and rotate, with no per-map seed: for keys that are the runtime's
/// own numbers (cells, record slots, its storage's node ids), never a peer's, so that no one can
/// aim collisions at it.
#[derive(Default)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_i64(&mut self, n: i64) {
        self.write_u64(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(26) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

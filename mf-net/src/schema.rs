//! Stable, compile-time schema hashing (FNV-1a, 64-bit).
//!
//! Fingerprints must agree between builds, platforms and compiler versions, so they are built
//! only from names the user wrote and from these functions, never from `std`'s hasher or
//! `std::any::type_name`.

/// FNV-1a 64-bit offset basis: the hash of nothing.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Folds `bytes` into the running hash `hash`.
pub const fn hash_bytes(mut hash: u64, bytes: &[u8]) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(FNV_PRIME);
        i += 1;
    }
    hash
}

/// Folds a string, prefixed by its length so that `("ab", "c")` and `("a", "bc")` differ.
pub const fn hash_str(hash: u64, s: &str) -> u64 {
    let hash = hash_u64(hash, s.len() as u64);
    hash_bytes(hash, s.as_bytes())
}

/// Folds a `u64` (little-endian bytes) into the running hash.
pub const fn hash_u64(hash: u64, v: u64) -> u64 {
    hash_bytes(hash, &v.to_le_bytes())
}

/// The hash of a bare name: the starting point of a type's schema hash.
pub const fn hash_name(name: &str) -> u64 {
    hash_str(FNV_OFFSET, name)
}

/// Folds a 64-bit hash down to the 32 bits carried by connect data and handshakes.
pub const fn fold32(hash: u64) -> u32 {
    (hash ^ (hash >> 32)) as u32
}

/// Drops the crate name from a `module_path!()`-style path, so a type's stable name does not
/// change when the same module is compiled into differently named crates (a server binary and a
/// client binary, say). `"game::net::Chat"` becomes `"net::Chat"`, and `"game::Chat"` becomes
/// `"Chat"`.
pub const fn strip_crate(path: &'static str) -> &'static str {
    let bytes = path.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b':' && bytes[i + 1] == b':' {
            let (_, rest) = bytes.split_at(i + 2);
            return match std::str::from_utf8(rest) {
                Ok(s) => s,
                Err(_) => path,
            };
        }
        i += 1;
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_reference_vectors() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(hash_bytes(FNV_OFFSET, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash_bytes(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(hash_bytes(FNV_OFFSET, b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn length_prefix_separates_concatenations() {
        let ab_c = hash_str(hash_str(FNV_OFFSET, "ab"), "c");
        let a_bc = hash_str(hash_str(FNV_OFFSET, "a"), "bc");
        assert_ne!(ab_c, a_bc);
    }

    #[test]
    fn strip_crate_drops_the_first_segment() {
        assert_eq!(strip_crate("game::net::Chat"), "net::Chat");
        assert_eq!(strip_crate("game::Chat"), "Chat");
        assert_eq!(strip_crate("Chat"), "Chat");
    }
}

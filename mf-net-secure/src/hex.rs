//! Lowercase hex text for tokens and keys.

use std::fmt::Write as _;

/// `bytes` as lowercase hex.
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(text, "{b:02x}");
    }
    text
}

/// The bytes of hex `text` (surrounding whitespace ignored, either case); `None` if it is not
/// hex.
pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    let text = text.trim().as_bytes();
    if text.len() % 2 != 0 || !text.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    text.chunks(2)
        .map(|pair| {
            let digits = std::str::from_utf8(pair).ok()?;
            u8::from_str_radix(digits, 16).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trips_and_refuses_non_hex() {
        assert_eq!(super::encode(&[0, 0xab, 7]), "00ab07");
        assert_eq!(super::decode(" 00AB07\n"), Some(vec![0, 0xab, 7]));
        assert_eq!(super::decode("0g"), None);
        assert_eq!(super::decode("abc"), None);
        assert_eq!(super::decode("+1"), None);
    }
}

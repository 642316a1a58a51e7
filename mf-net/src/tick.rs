//! Network ticks compared by serial-number arithmetic (RFC 1982): the `u32` tick wraps after
//! 2³² ticks (195 days at 255 Hz), and a server runs on across the wrap. Tick `a` is after tick
//! `b` when going forward from `b` reaches `a` in fewer than 2³¹ steps, so `0` is after
//! `u32::MAX`. Two ticks are ordered correctly as long as they are less than 2³¹ apart
//! ([`HORIZON`] keeps every tick the server stores within that: see [`HORIZON`]).
//!
//! Every comparison of two ticks goes through these functions; ticks are never compared with
//! `<`, `>` or `max`.

/// How old (in ticks) a tick the server keeps may get before it is moved up to this age: 2³⁰
/// (about 48 days at 255 Hz, 414 days at 30 Hz). Serial arithmetic orders two ticks only while
/// they are less than 2³¹ apart, so a member unchanged for that long would look changed again;
/// the server's sweep ([`Multiplayer`](crate::replication::Multiplayer) visits a few nodes a
/// tick) re-stamps every shadow state and acknowledgement older than this to this age, in an
/// order-preserving way, long before it reaches 2³¹.
pub(crate) const HORIZON: u32 = 1 << 30;

/// The signed distance from `b` to `a`: positive when `a` is after `b`.
#[inline]
pub(crate) const fn tick_diff(a: u32, b: u32) -> i32 {
    a.wrapping_sub(b) as i32
}

/// Whether tick `a` is after tick `b`.
#[inline]
pub const fn tick_after(a: u32, b: u32) -> bool {
    tick_diff(a, b) > 0
}

/// The later of two ticks.
#[inline]
pub const fn tick_max(a: u32, b: u32) -> u32 {
    if tick_after(b, a) {
        b
    } else {
        a
    }
}

/// The newer of `newest` and `stamp` (serial-number order), counting `stamp` only if it is
/// before `limit`: one step of [`Capture::changed_before`](crate::replication::Capture::changed_before).
#[inline]
pub fn newest_before(newest: Option<u32>, stamp: Option<u32>, limit: u32) -> Option<u32> {
    match stamp {
        Some(t) if tick_after(limit, t) => Some(newest.map_or(t, |n| tick_max(n, t))),
        _ => newest,
    }
}

/// `tick` on the continuous timeline of `reference` (a render tick or a clock estimate, which
/// count on past `u32::MAX` across the wrap): the value congruent to `tick` modulo 2³² nearest
/// to `reference` (within 2³¹ ticks). A `reference` that is not finite gives `tick` as it is.
#[inline]
pub(crate) fn unwrap_near(tick: u32, reference: f64) -> f64 {
    if !reference.is_finite() {
        return f64::from(tick);
    }
    // The whole ticks of `reference` (truncated towards zero, saturating far past any real
    // tick count), and their value modulo 2³² by the cast, with no division: this runs for
    // every interpolated member of every row, every frame.
    #[allow(clippy::cast_possible_truncation)]
    let base = reference as i64;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let base_tick = base as u32;
    #[allow(clippy::cast_precision_loss)]
    let base = base as f64;
    base + f64::from(tick_diff(tick, base_tick))
}

/// `tick` moved up to `floor` if it is before it (a stored tick older than [`HORIZON`]).
#[inline]
pub(crate) const fn clamp_to(tick: u32, floor: u32) -> u32 {
    tick_max(tick, floor)
}

#[cfg(test)]
mod tests {
    use super::{clamp_to, tick_after, tick_diff, tick_max, unwrap_near};

    #[test]
    fn ticks_order_across_the_wrap() {
        assert!(tick_after(0, u32::MAX));
        assert!(tick_after(5, u32::MAX - 5));
        assert!(!tick_after(u32::MAX, 0));
        assert!(!tick_after(7, 7));
        assert_eq!(clamp_to(u32::MAX - 9, 4), 4);
        assert_eq!(clamp_to(6, 4), 6);
        assert_eq!(tick_diff(3, u32::MAX - 2), 6);
        assert_eq!(tick_diff(u32::MAX - 2, 3), -6);
        assert_eq!(tick_max(u32::MAX, 1), 1);
        assert_eq!(tick_max(1, u32::MAX), 1);
        assert_eq!(tick_max(10, 9), 10);
        // Within 2³¹ of each other: ordered; 2³¹ - 1 ahead is still after.
        assert!(tick_after((1 << 31) - 1, 0));
        assert!(!tick_after(1 << 31, 0) || !tick_after(0, 1 << 31));
    }

    #[test]
    fn ticks_unwrap_onto_a_continuous_timeline() {
        let wrap = 4_294_967_296.0;
        assert_eq!(unwrap_near(5, wrap + 3.5), wrap + 5.0);
        assert_eq!(unwrap_near(u32::MAX, wrap + 3.5), wrap - 1.0);
        assert_eq!(unwrap_near(2, wrap - 1.5), wrap + 2.0);
        assert_eq!(unwrap_near(12, 99.0), 12.0);
        assert_eq!(unwrap_near(u32::MAX, -2.0), -1.0);
        assert_eq!(unwrap_near(7, f64::NAN), 7.0);
    }
}

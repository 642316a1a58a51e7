//! [`InterpolationBuffer`]: the last 32 samples of one interpolated member.

use std::fmt;

use super::Interpolate;
use crate::tick::{tick_after, tick_diff, unwrap_near};

/// The last [`CAPACITY`](Self::CAPACITY) (32) samples `(tick, value)` of one interpolated
/// member, oldest first, in a fixed ring: it allocates once, in [`new`](Self::new), and never
/// again (pushing past the capacity overwrites the oldest sample; [`clear`](Self::clear) keeps
/// the storage).
///
/// Ticks are server ticks and strictly increase: a sample at or before the newest tick (a
/// stale, reordered or duplicated snapshot) is ignored. Ticks wrap after 2³²: they are
/// ordered by serial-number arithmetic (RFC 1982), so `0` comes after `u32::MAX`, and the
/// samples of one buffer must lie within 2³¹ ticks of each other (32 samples do). Render ticks
/// ([`sample`](Self::sample)) are on a continuous timeline, as a
/// [`ServerClock`](super::ServerClock) counts: each sample's tick is taken as its value
/// nearest the render tick, so a render tick past `u32::MAX` samples the ticks after the wrap.
///
/// ```
/// use mf_net::interpolation::InterpolationBuffer;
///
/// let mut x = InterpolationBuffer::new();
/// x.push(10, 0.0_f32);
/// x.push(12, 4.0);
/// assert_eq!(x.sample(11.0, 12, 15.0), Some(2.0)); // between: blended
/// assert_eq!(x.sample(5.0, 12, 15.0), Some(0.0)); // before the oldest: the oldest
/// assert_eq!(x.sample(14.0, 13, 15.0), Some(4.0)); // known still past 12: held
/// assert_eq!(x.sample(14.0, 12, 15.0), Some(8.0)); // late data: extrapolated, 2 ticks
/// assert_eq!(x.sample(99.0, 12, 3.0), Some(10.0)); // at most 3 ticks, then stopped
/// ```
pub struct InterpolationBuffer<T> {
    /// The samples; once full, a ring whose oldest sample is at `head`. While filling, `head`
    /// is `0` and the samples are in order. Never grows past [`Self::CAPACITY`].
    samples: Vec<(u32, T)>,
    head: usize,
}

impl<T> InterpolationBuffer<T> {
    /// How many samples a buffer keeps.
    pub const CAPACITY: usize = 32;

    /// `CAPACITY - 1`: ring indices wrap with this mask.
    const MASK: usize = {
        assert!(Self::CAPACITY.is_power_of_two());
        Self::CAPACITY - 1
    };

    /// An empty buffer, with room for [`CAPACITY`](Self::CAPACITY) samples: the only
    /// allocation it ever makes.
    pub fn new() -> Self {
        Self {
            samples: Vec::with_capacity(Self::CAPACITY),
            head: 0,
        }
    }

    /// How many samples it holds (at most [`CAPACITY`](Self::CAPACITY)).
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether it holds no sample.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The `index`-th oldest sample (`0` is the oldest), if there are that many.
    pub fn get(&self, index: usize) -> Option<(u32, &T)> {
        (index < self.len()).then(|| self.at(index))
    }

    /// The oldest sample.
    pub fn oldest(&self) -> Option<(u32, &T)> {
        self.get(0)
    }

    /// The newest sample.
    pub fn newest(&self) -> Option<(u32, &T)> {
        self.len().checked_sub(1).map(|last| self.at(last))
    }

    /// The samples, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> + '_ {
        let (newer, older) = self.samples.split_at(self.head);
        older
            .iter()
            .chain(newer)
            .map(|(tick, value)| (*tick, value))
    }

    /// Adds the value of a snapshot of `tick`. Returns `false`, and changes nothing, when
    /// `tick` is not newer than the newest sample (a stale or duplicated snapshot).
    ///
    /// When the member may have been still since its newest sample (it was absent from
    /// snapshots), use [`push_with_hold`](Self::push_with_hold) instead.
    pub fn push(&mut self, tick: u32, value: T) -> bool {
        if self
            .newest()
            .is_some_and(|(newest, _)| !tick_after(tick, newest))
        {
            return false;
        }
        if self.samples.len() < Self::CAPACITY {
            // Within the capacity reserved by `new`: no allocation.
            self.samples.push((tick, value));
        } else {
            self.samples[self.head] = (tick, value);
            self.head = (self.head + 1) & Self::MASK;
        }
        true
    }

    /// Removes every sample and keeps the storage.
    pub fn clear(&mut self) {
        self.samples.clear();
        self.head = 0;
    }

    /// Removes every sample but the newest, which stays at its tick, and keeps the storage.
    /// Called when the [`ServerClock`] snaps ([`ClockUpdate::Snapped`]), after the member was
    /// set to that newest value: the render tick jumped, so the member shows its newest value
    /// rather than sliding through older samples; and as sample ticks are server ticks, the
    /// newest one stays right: the value it holds, and the tick from which a later
    /// [hold sample](Self::insert_hold) makes motion resume.
    ///
    /// ```
    /// use mf_net::interpolation::InterpolationBuffer;
    ///
    /// let mut x = InterpolationBuffer::new();
    /// x.push(10, 1.0_f32);
    /// x.push(11, 2.0);
    /// x.retain_newest();
    /// assert_eq!(x.len(), 1);
    /// assert_eq!(x.newest(), Some((11, &2.0)));
    /// // Still until tick 40, then moving: the blend starts at 40, not at 11.
    /// x.push_with_hold(40, 41, 3.0);
    /// assert_eq!(x.sample(40.0, 41, 0.0), Some(2.0));
    /// ```
    ///
    /// [`ServerClock`]: super::ServerClock
    /// [`ClockUpdate::Snapped`]: super::ClockUpdate::Snapped
    pub fn retain_newest(&mut self) {
        let Some(last) = self.len().checked_sub(1) else {
            return;
        };
        // The newest sample to the front, then everything after it dropped: no allocation.
        self.samples.swap(0, (self.head + last) & Self::MASK);
        self.samples.truncate(1);
        self.head = 0;
    }

    /// The `index`-th oldest sample; `index < len`. While filling, `head` is 0 and
    /// `index < len <= CAPACITY`, so the mask leaves `index` as it is; once full it wraps the
    /// ring (the capacity is a power of two: no division).
    #[inline]
    fn at(&self, index: usize) -> (u32, &T) {
        let (tick, value) = &self.samples[(self.head + index) & Self::MASK];
        (*tick, value)
    }
}

impl<T: Clone> InterpolationBuffer<T> {
    /// Inserts a **hold sample**, a copy of the newest value, at `tick`: the member was still
    /// from its newest sample until `tick`. Returns `false`, and changes nothing, when the
    /// buffer is empty or `tick` is not newer than the newest sample.
    ///
    /// Snapshots carry only changed members, so a member absent from them was still. When it
    /// changes again, the hold sample at the tick up to which its node was known makes the
    /// blend towards the new value start there, so motion resumes from the right moment
    /// instead of drifting from when it stopped. [`push_with_hold`](Self::push_with_hold) does
    /// both steps.
    pub fn insert_hold(&mut self, tick: u32) -> bool {
        let Some((newest, value)) = self.newest() else {
            return false;
        };
        if !tick_after(tick, newest) {
            return false;
        }
        let value = value.clone();
        self.push(tick, value)
    }

    /// Adds the value of a snapshot of `tick` for a member whose node was known (still) up to
    /// `known_until` before this snapshot: first a [hold sample](Self::insert_hold) at
    /// `known_until` when that is between the newest sample and `tick`, then the value.
    ///
    /// `known_until` is the node's known tick **before** this snapshot updates it: the newer of
    /// the last snapshot that carried the node and the last untruncated snapshot.
    ///
    /// Returns `false`, and changes nothing, when `tick` is not newer than the newest sample.
    pub fn push_with_hold(&mut self, known_until: u32, tick: u32, value: T) -> bool {
        if self
            .newest()
            .is_some_and(|(newest, _)| !tick_after(tick, newest))
        {
            return false;
        }
        if tick_after(tick, known_until) {
            self.insert_hold(known_until);
        }
        self.push(tick, value)
    }
}

impl<T: Interpolate> InterpolationBuffer<T> {
    /// The value to show at `render_tick` (fractional), or `None` when the buffer is empty.
    ///
    /// - Between two samples: their blend ([`Interpolate::interpolate`]).
    /// - At or before the oldest sample: the oldest value.
    /// - Past the newest sample:
    ///   - if the node is known past it (`known_until > newest tick`), the member was still:
    ///     the newest value is **held**. (Its last velocity is zero, so this also holds when
    ///     `known_until` is older than `render_tick`.)
    ///   - otherwise data is late: the motion of the last two samples is **extrapolated** for
    ///     at most `max_extrapolation_ticks` past the newest sample, then stops there (a
    ///     value that keeps being shown until new data arrives);
    ///   - types with [`EXTRAPOLATE`](Interpolate::EXTRAPOLATE) `= false` (rotations) and
    ///     buffers with a single sample hold the newest value instead.
    ///
    /// `known_until` is the node's known tick (see [`push_with_hold`](Self::push_with_hold)).
    /// Allocates nothing unless cloning `T` does.
    pub fn sample(
        &self,
        render_tick: f64,
        known_until: u32,
        max_extrapolation_ticks: f64,
    ) -> Option<T> {
        let (oldest_tick, oldest) = self.oldest()?;
        // A NaN render tick shows the oldest value too.
        if render_tick.is_nan() {
            return Some(oldest.clone());
        }
        let last = self.len() - 1;
        let (newest_tick, _) = self.at(last);
        // Every sample on the render tick's timeline, by its distance from the newest.
        let newest_at = unwrap_near(newest_tick, render_tick);
        let on_timeline = |tick: u32| newest_at + f64::from(tick_diff(tick, newest_tick));
        if render_tick <= on_timeline(oldest_tick) {
            return Some(oldest.clone());
        }
        if render_tick >= newest_at {
            return Some(self.past_newest(render_tick, known_until, max_extrapolation_ticks));
        }
        // oldest < render_tick < newest: find the first sample after `render_tick`, walking back
        // from the newest. The render tick trails the newest sample by the interpolation delay
        // (a few ticks), so this touches two or three neighbouring samples, where a binary
        // search would jump across the whole ring.
        // Invariant: render_tick < tick(lo); the walk stops at tick(lo - 1) <= render_tick,
        // which holds at lo = 1 (the oldest is before render_tick).
        let mut lo = last;
        while lo > 1 && on_timeline(self.at(lo - 1).0) > render_tick {
            lo -= 1;
        }
        let (from_tick, from) = self.at(lo - 1);
        let (to_tick, to) = self.at(lo);
        let from_tick = on_timeline(from_tick);
        let t = (render_tick - from_tick) / (on_timeline(to_tick) - from_tick);
        Some(from.interpolate(to, t as f32))
    }

    /// [`sample`](Self::sample) past the newest sample (`render_tick ≥ newest tick`).
    fn past_newest(&self, render_tick: f64, known_until: u32, max_extrapolation_ticks: f64) -> T {
        let last = self.len() - 1;
        let (newest_tick, newest) = self.at(last);
        if !T::EXTRAPOLATE || last == 0 || tick_after(known_until, newest_tick) {
            return newest.clone();
        }
        if max_extrapolation_ticks.is_nan() || max_extrapolation_ticks <= 0.0 {
            return newest.clone();
        }
        let ahead =
            (render_tick - unwrap_near(newest_tick, render_tick)).min(max_extrapolation_ticks);
        if ahead <= 0.0 {
            return newest.clone();
        }
        let (previous_tick, previous) = self.at(last - 1);
        let spacing = f64::from(newest_tick.wrapping_sub(previous_tick));
        previous.interpolate(newest, (1.0 + ahead / spacing) as f32)
    }
}

impl<T> Default for InterpolationBuffer<T> {
    /// [`new`](Self::new).
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Clone> Clone for InterpolationBuffer<T> {
    /// A copy with its own full capacity (a derived `clone` would reserve only `len` samples
    /// and allocate again on the next push).
    fn clone(&self) -> Self {
        let mut samples = Vec::with_capacity(Self::CAPACITY);
        samples.extend(self.iter().map(|(tick, value)| (tick, value.clone())));
        Self { samples, head: 0 }
    }
}

impl<T: fmt::Debug> fmt::Debug for InterpolationBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type Buf = InterpolationBuffer<f64>;

    fn ticks<T>(b: &InterpolationBuffer<T>) -> Vec<u32> {
        b.iter().map(|(tick, _)| tick).collect()
    }

    #[test]
    fn samples_across_the_wrap_on_a_continuous_timeline() {
        let mut b = Buf::new();
        for (k, tick) in [u32::MAX - 1, u32::MAX, 0, 1].into_iter().enumerate() {
            assert!(b.push(tick, 10.0 * k as f64));
        }
        assert!(
            !b.push(u32::MAX, 99.0),
            "before the newest (serial-number order)"
        );
        assert_eq!(ticks(&b), [u32::MAX - 1, u32::MAX, 0, 1]);
        let wrap = 4_294_967_296.0;
        assert_eq!(b.sample(wrap - 1.5, 1, 0.0), Some(5.0));
        assert_eq!(b.sample(wrap - 0.5, 1, 0.0), Some(15.0));
        assert_eq!(b.sample(wrap + 0.5, 1, 0.0), Some(25.0));
        // Past the newest: extrapolated at the last spacing, across the wrap.
        assert_eq!(b.sample(wrap + 2.0, 1, 5.0), Some(40.0));
        assert_eq!(b.sample(wrap - 10.0, 1, 5.0), Some(0.0));
        // A hold at a tick past the wrap.
        assert!(b.push_with_hold(5, 8, 50.0));
        assert_eq!(ticks(&b), [u32::MAX - 1, u32::MAX, 0, 1, 5, 8]);
    }

    #[test]
    fn empty_buffer_samples_nothing() {
        let b = Buf::new();
        assert!(b.is_empty());
        assert_eq!(b.sample(0.0, 0, 10.0), None);
        assert_eq!(b.newest(), None);
        assert_eq!(b.oldest(), None);
        let mut b = b;
        assert!(!b.insert_hold(5), "nothing to hold");
        assert!(b.is_empty());
    }

    #[test]
    fn push_ignores_samples_not_newer_than_the_newest() {
        let mut b = Buf::new();
        assert!(b.push(5, 1.0));
        assert!(!b.push(5, 2.0), "duplicate tick");
        assert!(!b.push(3, 3.0), "older tick");
        assert!(b.push(6, 4.0));
        assert_eq!(ticks(&b), [5, 6]);
        assert_eq!(b.newest(), Some((6, &4.0)));
        assert_eq!(b.oldest(), Some((5, &1.0)));
    }

    #[test]
    fn ring_keeps_the_newest_32_in_order_without_growing() {
        let mut b = Buf::new();
        let capacity = b.samples.capacity();
        for tick in 1..=100u32 {
            assert!(b.push(tick, f64::from(tick)));
            assert_eq!(b.samples.capacity(), capacity);
            let expected: Vec<u32> = (tick.saturating_sub(31).max(1)..=tick).collect();
            assert_eq!(ticks(&b), expected);
        }
        assert_eq!(b.len(), Buf::CAPACITY);
        for i in 0..Buf::CAPACITY {
            let (tick, value) = b.get(i).unwrap();
            assert_eq!(tick, 69 + i as u32);
            assert_eq!(*value, f64::from(tick));
        }
        assert_eq!(b.get(Buf::CAPACITY), None);
        // Stale pushes are refused after wrapping too.
        assert!(!b.push(100, 0.0));
        assert!(!b.push(50, 0.0));
        b.clear();
        assert!(b.is_empty());
        assert_eq!(b.samples.capacity(), capacity);
        assert!(b.push(7, 7.0), "after clear any tick is new");
    }

    #[test]
    fn retain_newest_keeps_the_newest_sample_at_its_tick() {
        // Empty: nothing to keep.
        let mut b = Buf::new();
        b.retain_newest();
        assert!(b.is_empty());
        // While filling, and once the ring has wrapped (the newest anywhere in the ring).
        for pushed in [1u32, 5, 32, 33, 40, 63, 64, 100] {
            let mut b = Buf::new();
            let capacity = b.samples.capacity();
            for tick in 1..=pushed {
                b.push(tick, f64::from(tick) * 0.5);
            }
            b.retain_newest();
            assert_eq!(ticks(&b), [pushed], "{pushed} pushed");
            assert_eq!(b.newest(), Some((pushed, &(f64::from(pushed) * 0.5))));
            assert_eq!(b.samples.capacity(), capacity);
            // Older ticks stay refused; newer ones go on after it, holds included.
            assert!(!b.push(pushed, 0.0));
            assert!(b.push_with_hold(pushed + 10, pushed + 11, 99.0));
            assert_eq!(ticks(&b), [pushed, pushed + 10, pushed + 11]);
        }
    }

    #[test]
    fn blends_between_samples_across_the_ring_seam() {
        let mut b = Buf::new();
        // Value 10·tick at even ticks; 40 samples, so the ring has wrapped.
        for k in 0..40u32 {
            b.push(2 * k, f64::from(20 * k));
        }
        let (oldest, _) = b.oldest().unwrap();
        assert_eq!(oldest, 16);
        let mut render = 16.0;
        while render <= 78.0 {
            let v = b.sample(render, 78, 0.0).unwrap();
            assert!((v - 10.0 * render).abs() < 1e-9, "{render}: {v}");
            render += 0.125;
        }
        // Before the oldest: the oldest.
        assert_eq!(b.sample(3.0, 78, 0.0), Some(160.0));
        assert_eq!(b.sample(f64::NAN, 78, 0.0), Some(160.0));
        assert_eq!(b.sample(f64::NEG_INFINITY, 78, 0.0), Some(160.0));
    }

    #[test]
    fn hold_extrapolate_and_cap_past_the_newest() {
        let mut b = Buf::new();
        b.push(10, 100.0);
        b.push(12, 110.0); // 5 per tick
                           // Known past the newest: held, however far.
        assert_eq!(b.sample(20.0, 13, 6.0), Some(110.0));
        assert_eq!(b.sample(12.5, 13, 6.0), Some(110.0));
        // Known exactly to the newest (data late): extrapolated, then capped.
        assert_eq!(b.sample(12.0, 12, 6.0), Some(110.0));
        assert_eq!(b.sample(14.0, 12, 6.0), Some(120.0));
        assert_eq!(b.sample(18.0, 12, 6.0), Some(140.0));
        assert_eq!(b.sample(25.0, 12, 6.0), Some(140.0), "stopped at the cap");
        // No extrapolation allowed.
        assert_eq!(b.sample(14.0, 12, 0.0), Some(110.0));
        assert_eq!(b.sample(14.0, 12, -3.0), Some(110.0));
        assert_eq!(b.sample(14.0, 12, f64::NAN), Some(110.0));
        // A single sample has no velocity: held.
        let mut one = Buf::new();
        one.push(3, 1.5);
        assert_eq!(one.sample(9.0, 3, 6.0), Some(1.5));
        assert_eq!(one.sample(0.0, 3, 6.0), Some(1.5));
    }

    /// Like `f64`, but never extrapolated.
    #[derive(Clone, Debug, PartialEq)]
    struct Held(f64);

    impl Interpolate for Held {
        const EXTRAPOLATE: bool = false;
        fn interpolate(&self, to: &Self, t: f32) -> Self {
            assert!((0.0..=1.0).contains(&t), "asked to extrapolate: t = {t}");
            Held(self.0.interpolate(&to.0, t))
        }
    }

    #[test]
    fn types_that_do_not_extrapolate_hold() {
        let mut b = InterpolationBuffer::new();
        b.push(0, Held(0.0));
        b.push(1, Held(1.0));
        assert_eq!(b.sample(0.5, 1, 10.0), Some(Held(0.5)));
        assert_eq!(b.sample(5.0, 1, 10.0), Some(Held(1.0)));
    }

    #[test]
    fn hold_samples_make_motion_resume_at_the_right_moment() {
        let mut b = Buf::new();
        b.push(0, 0.0);
        b.push(1, 1.0);
        // Still from tick 1 to 10 (absent from snapshots), then moves again.
        assert!(b.push_with_hold(10, 11, 2.0));
        assert_eq!(ticks(&b), [0, 1, 10, 11]);
        assert_eq!(b.sample(5.0, 11, 0.0), Some(1.0));
        assert_eq!(b.sample(10.5, 11, 0.0), Some(1.5));
        // Without the hold, the blend would have started at tick 1.
        let mut drift = Buf::new();
        drift.push(0, 0.0);
        drift.push(1, 1.0);
        drift.push(11, 2.0);
        assert_eq!(drift.sample(6.0, 11, 0.0), Some(1.5));
    }

    #[test]
    fn push_with_hold_skips_pointless_or_stale_holds() {
        let mut b = Buf::new();
        // Empty: nothing to hold.
        assert!(b.push_with_hold(4, 5, 1.0));
        assert_eq!(ticks(&b), [5]);
        // Known only up to the newest sample, or to this tick or later: no hold.
        assert!(b.push_with_hold(5, 6, 2.0));
        assert!(b.push_with_hold(7, 7, 3.0));
        assert!(b.push_with_hold(9, 8, 4.0));
        assert_eq!(ticks(&b), [5, 6, 7, 8]);
        // A stale value changes nothing, hold included.
        assert!(!b.push_with_hold(12, 8, 9.0));
        assert_eq!(ticks(&b), [5, 6, 7, 8]);
        assert!(b.insert_hold(9));
        assert!(!b.insert_hold(9));
        assert_eq!(b.newest(), Some((9, &4.0)));
    }

    #[test]
    fn clone_keeps_full_capacity_and_order() {
        let mut b = Buf::new();
        for tick in 0..40 {
            b.push(tick, f64::from(tick));
        }
        let c = b.clone();
        assert_eq!(ticks(&c), ticks(&b));
        assert!(c.samples.capacity() >= Buf::CAPACITY);
        assert_eq!(format!("{:?}", Buf::default()), "{}");
        let mut small = Buf::new();
        small.push(1, 0.5);
        assert_eq!(format!("{small:?}"), "{1: 0.5}");
    }

    proptest! {
        /// Whatever arrives, the ticks stay strictly increasing, and samples within the
        /// samples' span stay within the values' range (linear blending is convex).
        #[test]
        fn samples_stay_ordered_and_bounded(
            pushes in prop::collection::vec((0u32..200, -1e3_f64..1e3, any::<bool>()), 0..100),
            render in -10.0_f64..210.0,
        ) {
            let mut b = Buf::new();
            for (tick, value, hold) in pushes {
                if hold {
                    b.insert_hold(tick);
                } else {
                    b.push(tick, value);
                }
            }
            let t = ticks(&b);
            prop_assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
            prop_assert!(b.len() <= Buf::CAPACITY);
            if let Some((newest, _)) = b.newest() {
                // Held past the newest: the span's values bound every sample.
                let v = b.sample(render, newest + 1, 50.0).unwrap();
                let lo = b.iter().map(|(_, v)| *v).fold(f64::INFINITY, f64::min);
                let hi = b.iter().map(|(_, v)| *v).fold(f64::NEG_INFINITY, f64::max);
                prop_assert!(v >= lo - 1e-9 && v <= hi + 1e-9, "{v} outside {lo}..{hi}");
            }
        }
    }
}

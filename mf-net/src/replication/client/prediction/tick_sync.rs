//! The client's simulation clock: which tick it predicts, running ahead of the server by
//! about RTT/2 plus a margin so that its inputs arrive just before the server simulates
//! them.
//!
//! The server acknowledges inputs with the lowest *lead* they arrived with (ticks the newest
//! input was ahead of the tick being simulated; negative: late). The client steers the lowest
//! lead toward the configured margin: a little faster (up to [`MAX_SKEW`]) while the lowest of
//! the last [`RECENT_ACKS`] acks is below it (inputs arrive late now), a little slower only
//! while the lowest of the last [`LEAD_WINDOW`] acks is well above it (inputs arrived early all
//! along, jitter and loss bursts included). Reacting fast to lateness and slowly to earliness
//! keeps the lead high enough for the bursts the window has seen. A late input (the server went
//! without it) or a large shortfall (inputs [`CATCH_UP_TICKS`] or more late, as at the start)
//! jumps, and only forward: by the shortfall the acks report, or back to the clock's usual
//! distance ahead of the newest snapshot if that is further (after a stall the game loop hid
//! from the clock, the acks' shortfall misses their age and the slack the clock had learned).
//! After a jump, acks of inputs sent before it are ignored (by their stamps: an input sampled at
//! tick `t` is stamped `t + input_delay`, and acked by that). The present also stays past the
//! newest snapshot, jumping past it if it must and slowing down only two ticks or more ahead
//! of it: a confirmation of a tick not yet predicted is never compared with the prediction. The
//! frame the clock starts in counts one tick, however long: the start was placed from the
//! snapshot that arrived after it.
//!
//! A frame simulates at most [`MAX_TICKS_PER_FRAME`] ticks; the clock skips the rest (they are
//! not simulated), so that after a stall it is on time again at once, however long the stall:
//! a long frame (the stall in its `dt`) skips by the time that passed, a frame whose `dt` was
//! clamped by the game loop by the lateness the server's acks report. A frame that covers more
//! than [`CATCH_UP_TICKS`] ticks and than several typical frames also forgets the acks of inputs
//! sent before it: they measured the silence of the stall, which the frame's time made up
//! already.

use std::time::Duration;

use crate::tick::{tick_after, tick_diff};

/// Acks whose lowest lead must be above the margin for the clock to slow down (about 17
/// seconds at 30 Hz: the loss bursts and jitter of that long stay covered).
pub(crate) const LEAD_WINDOW: usize = 512;

/// The newest acks whose lowest lead below the margin speeds the clock up (or jumps it).
pub(crate) const RECENT_ACKS: usize = 8;

/// Most the clock runs faster or slower than the server's: 5 %.
pub(crate) const MAX_SKEW: f64 = 0.05;

/// Lead shortfall (ticks late) from which the client jumps ahead instead of speeding up.
pub(crate) const CATCH_UP_TICKS: i32 = 4;

/// Most ticks one jump moves the clock by (over four minutes at 255 Hz): an ack that says its
/// inputs were later than that is taken as saying this much.
pub(crate) const MAX_JUMP_TICKS: u32 = 1 << 16;

/// A frame longer than this many typical frames (and than [`CATCH_UP_TICKS`] ticks) is a
/// stall: the acks of the inputs sent before it are forgotten.
const STALL_FRAMES: u32 = 4;

/// Most ticks one frame simulates (a frame after a long stall does not simulate seconds: it
/// skips the ticks before the last ones).
pub(crate) const MAX_TICKS_PER_FRAME: u32 = 16;

/// What one frame's [`TickSync::advance`] moved the clock by: `skipped` ticks not simulated,
/// then `due` ticks to simulate (the present is the last of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Advance {
    pub(crate) skipped: u32,
    pub(crate) due: u32,
}

/// The client's simulation clock (see the [module docs](self)).
#[derive(Debug)]
pub(crate) struct TickSync {
    /// The newest tick simulated; `None` before the first.
    present: Option<u32>,
    /// The clock was just started, from the newest snapshot: the next frame's `dt` is already
    /// in it.
    started: bool,
    accumulator: Duration,
    leads: [i32; LEAD_WINDOW],
    lead_count: usize,
    lead_next: usize,
    /// Acks recorded since the last frame.
    fresh: usize,
    /// A typical frame's `dt` (a moving average; `None` before the first frame).
    typical_dt: Option<Duration>,
    /// How far the present runs ahead of the newest snapshot, in 16ths of a tick (a moving
    /// average; `None` before the first frame): where a jump goes back to after a stall.
    ahead_of_snapshots: Option<i32>,
    /// Acks of inputs up to this tick (as stamped: see `input_delay`) were sent before the
    /// last jump or stall: ignored.
    ignore_through: Option<u32>,
    /// Ticks between simulating a tick and the tick its input is stamped with (and acked by):
    /// [`PredictionConfig::input_delay`](crate::prediction::PredictionConfig::input_delay).
    input_delay: u32,
    /// The clock's current rate relative to the server's (1 ± [`MAX_SKEW`]).
    rate: f64,
    /// Times it jumped ahead.
    pub(crate) jumps: u64,
}

impl Default for TickSync {
    fn default() -> Self {
        Self {
            present: None,
            started: false,
            accumulator: Duration::ZERO,
            leads: [0; LEAD_WINDOW],
            lead_count: 0,
            lead_next: 0,
            fresh: 0,
            typical_dt: None,
            ahead_of_snapshots: None,
            ignore_through: None,
            input_delay: 0,
            rate: 1.0,
            jumps: 0,
        }
    }
}

impl TickSync {
    /// The newest tick simulated.
    pub(crate) fn present(&self) -> Option<u32> {
        self.present
    }

    /// The lowest lead of the acks in the window.
    pub(crate) fn lowest_lead(&self) -> Option<i32> {
        self.lowest_of(LEAD_WINDOW)
    }

    /// The lowest lead of the newest `n` acks.
    fn lowest_of(&self, n: usize) -> Option<i32> {
        let n = n.min(self.lead_count);
        (0..n)
            .map(|k| self.leads[(self.lead_next + LEAD_WINDOW - 1 - k) % LEAD_WINDOW])
            .min()
    }

    /// Inputs are stamped `delay` ticks after the tick that sampled them (the acks name
    /// stamps): set before each frame's [`advance`](Self::advance).
    pub(crate) fn set_input_delay(&mut self, delay: u32) {
        self.input_delay = delay;
    }

    /// An input ack: inputs up to `newest` (a stamp) arrived with `lead` at the lowest.
    pub(crate) fn on_ack(&mut self, newest: u32, lead: i32) {
        if self.ignore_through.is_some_and(|t| !tick_after(newest, t)) {
            return;
        }
        self.leads[self.lead_next] = lead;
        self.lead_next = (self.lead_next + 1) % LEAD_WINDOW;
        self.lead_count = (self.lead_count + 1).min(LEAD_WINDOW);
        self.fresh = (self.fresh + 1).min(LEAD_WINDOW);
    }

    /// Forgets the acks recorded since the last frame, and the ones still on their way of
    /// the inputs sampled up to tick `through` (stamped up to `input_delay` ticks later).
    fn forget_fresh(&mut self, through: u32) {
        let n = self.fresh.min(self.lead_count);
        self.lead_next = (self.lead_next + LEAD_WINDOW - n) % LEAD_WINDOW;
        self.lead_count -= n;
        self.fresh = 0;
        self.ignore_through = Some(through.wrapping_add(self.input_delay));
    }

    /// The first tick: `start` (the newest server tick seen plus a guess of the lead).
    pub(crate) fn start(&mut self, start: u32) {
        self.present = Some(start.wrapping_sub(1));
        self.accumulator = Duration::ZERO;
        self.started = true;
    }

    /// The frame advanced by `dt`: how many ticks to skip and to simulate now, steering toward
    /// a lowest lead of `margin` ticks. Advances the present by both.
    pub(crate) fn advance(
        &mut self,
        dt: Duration,
        interval: Duration,
        margin: i32,
        snapshot: u32,
    ) -> Advance {
        let Some(present) = self.present else {
            return Advance { skipped: 0, due: 0 };
        };
        // The frame the clock starts in counts one tick: the start was placed from the newest
        // snapshot, which arrived after the frame's time had passed (the whole of a loading
        // pause, at times).
        let dt = match std::mem::take(&mut self.started) {
            true => interval,
            false => dt,
        };
        if self.is_stall(dt, interval) {
            // A stall the frame's time tells of: the acks of inputs sent before it measured its
            // silence, which the frame's ticks make up already.
            self.forget_fresh(present);
        }
        self.fresh = 0;
        let shortfall = self.steer(margin, tick_diff(present, snapshot));
        let elapsed = self.ticks_elapsed(dt, interval);
        let shortfall = past_snapshot(shortfall, present.wrapping_add(elapsed), snapshot);
        let extra = shortfall.map_or(0, |s| self.jump(present, s, elapsed, snapshot));
        let total = elapsed.saturating_add(extra);
        let due = total.min(MAX_TICKS_PER_FRAME);
        let now = present.wrapping_add(total);
        self.present = Some(now);
        let sample = tick_diff(now, snapshot).saturating_mul(16);
        let ahead = self.ahead_of_snapshots.unwrap_or(sample);
        self.ahead_of_snapshots = Some(ahead + (sample - ahead) / 16);
        Advance {
            skipped: total - due,
            due,
        }
    }

    /// Whether a frame of `dt` is a stall: longer than [`CATCH_UP_TICKS`] ticks and than
    /// [`STALL_FRAMES`] typical frames (a client whose every frame is long is not stalling).
    /// Updates the typical frame.
    fn is_stall(&mut self, dt: Duration, interval: Duration) -> bool {
        let typical = self.typical_dt.unwrap_or(dt);
        let long = interval.saturating_mul(CATCH_UP_TICKS.unsigned_abs());
        let stall_from = typical.saturating_mul(STALL_FRAMES);
        let stall = dt > long && dt > stall_from;
        // An average of the last 8 or so frames, each counted as at most a stall's shortest:
        // a stall counted whole would make the typical frame seconds long, and a second stall
        // right after it would not be one (its acks, late by the whole stall, would jump the
        // clock that far again, on top of the ticks the frame's time made up). Frames that
        // stay long still raise it, by three eighths a frame.
        let counted = dt.min(stall_from);
        self.typical_dt = Some(typical - typical / 8 + counted / 8);
        stall
    }

    /// Ticks the frame's `dt` covers at the rate set (the remainder kept for the next).
    fn ticks_elapsed(&mut self, dt: Duration, interval: Duration) -> u32 {
        self.accumulator += dt.mul_f64(self.rate);
        let n = self.accumulator.as_nanos() / interval.as_nanos().max(1);
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        self.accumulator -= interval.saturating_mul(n);
        n
    }

    /// Sets the rate for the next frame from the recent acks, or returns the ticks to jump
    /// ahead by now (the shortfall, when inputs arrive late); `ahead`: ticks the present is
    /// past the newest snapshot (it slows down only from two on, so as to stay past it).
    fn steer(&mut self, margin: i32, ahead: i32) -> Option<u32> {
        self.rate = 1.0;
        let (Some(recent), Some(lowest)) = (self.lowest_of(RECENT_ACKS), self.lowest_lead()) else {
            return None;
        };
        let error = if recent < margin {
            recent.saturating_sub(margin)
        } else {
            lowest.saturating_sub(margin).max(0)
        };
        if recent < 0 || error <= -CATCH_UP_TICKS {
            // Late (the server went without an input), or far behind.
            return Some(error.unsigned_abs().min(MAX_JUMP_TICKS));
        }
        if error < 0 {
            self.rate = 1.0 + MAX_SKEW * f64::from(-error).min(2.0) / 2.0;
        } else if error > 1 && ahead > 1 {
            self.rate = 1.0 - MAX_SKEW * f64::from(error - 1).min(2.0) / 2.0;
        }
        None
    }

    /// Jumps ahead by `shortfall` ticks, or further: back to as far ahead of the newest
    /// `snapshot` as the present ran on average (after a stall that the frame's `dt` did not
    /// tell of, the acks' shortfall misses the slack the clock had learned, and their age).
    /// The leads kept move up with it; acks of inputs sent before the jump, still on their
    /// way, are ignored. Returns the ticks jumped, beyond the `elapsed` ones.
    fn jump(&mut self, present: u32, shortfall: u32, elapsed: u32, snapshot: u32) -> u32 {
        let usual = self.ahead_of_snapshots.map_or(0, |a| {
            let target = snapshot.wrapping_add_signed(a.div_euclid(16));
            tick_diff(target, present.wrapping_add(elapsed))
        });
        let extra = shortfall
            .max(usual.max(0).unsigned_abs())
            .min(MAX_JUMP_TICKS);
        // The inputs sent before the jump are stamped up to `input_delay` ticks after it.
        self.ignore_through = Some(present.wrapping_add(extra.max(self.input_delay)));
        let shift = i32::try_from(extra).unwrap_or(i32::MAX);
        // Every slot of the ring, not the first `lead_count`: once it has wrapped, those are not
        // the window's (the newest leads would keep the shortfall, and jump again every frame).
        // The slots outside the window are written before they are read.
        for lead in &mut self.leads {
            *lead = lead.saturating_add(shift);
        }
        self.jumps += 1;
        extra
    }
}

/// The ticks to jump by: `shortfall`, or more if that does not take the present (`after` the
/// frame's ticks) past the newest `snapshot`. A confirmation of a tick not predicted yet is
/// never compared with the prediction; an input delay longer than the round trip and the
/// margin would otherwise keep the clock there.
fn past_snapshot(shortfall: Option<u32>, after: u32, snapshot: u32) -> Option<u32> {
    let behind = tick_diff(snapshot, after).saturating_add(1);
    match u32::try_from(behind) {
        Ok(behind) if behind > 0 => Some(shortfall.map_or(behind, |s| s.max(behind))),
        _ => shortfall,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_micros(33_333);

    #[test]
    fn runs_at_the_server_rate_without_acks() {
        let mut s = TickSync::default();
        assert_eq!(s.advance(TICK, TICK, 1, 0).due, 0, "not started");
        s.start(100);
        let due: u32 = (0..30).map(|_| s.advance(TICK, TICK, 1, 0).due).sum();
        assert!((29..=30).contains(&due), "{due}");
    }

    #[test]
    fn late_inputs_jump_ahead_and_slightly_early_ones_speed_up() {
        let mut s = TickSync::default();
        s.start(10);
        s.on_ack(9, -6);
        let due = s.advance(TICK, TICK, 1, 0).due;
        assert!(due >= 7, "{due}: caught up the 7 ticks at once");
        let present = s.present().unwrap();
        assert_eq!(s.jumps, 1);
        assert_eq!(
            s.lowest_lead(),
            Some(1),
            "the lead kept moved up with the jump"
        );
        s.on_ack(present.wrapping_sub(1), -6);
        assert_eq!(
            s.lowest_lead(),
            Some(1),
            "acks of inputs sent before the jump are ignored"
        );
        s.on_ack(present.wrapping_add(1), 0);
        s.advance(Duration::ZERO, TICK, 1, 0);
        assert!(s.rate > 1.0, "on time but under the margin: faster");
        assert_eq!(s.jumps, 1, "a lead of 0 is on time: no jump");
        s.on_ack(present.wrapping_add(2), -1);
        s.advance(Duration::ZERO, TICK, 1, 0);
        assert_eq!(s.jumps, 2, "an input late by a tick jumps");
        let present = s.present().unwrap();
        for k in 0..RECENT_ACKS as u32 {
            s.on_ack(present.wrapping_add(1 + k), 5);
        }
        s.advance(Duration::ZERO, TICK, 1, 0);
        assert_eq!(
            s.rate, 1.0,
            "a low lead no longer recent neither speeds up nor lets it slow down"
        );
    }

    #[test]
    fn early_inputs_slow_down_and_never_go_back() {
        let mut s = TickSync::default();
        s.start(10);
        for k in 0..LEAD_WINDOW as u32 {
            s.on_ack(10 + k, 9);
        }
        let before = s.present().unwrap();
        let due: u32 = (0..60).map(|_| s.advance(TICK, TICK, 1, 0).due).sum();
        assert!(s.rate < 1.0);
        assert!((56..60).contains(&due), "{due}");
        assert!(tick_after(s.present().unwrap(), before));
    }

    #[test]
    fn a_long_frame_skips_the_ticks_past_a_frame_and_forgets_the_acks_of_the_stall() {
        let mut s = TickSync::default();
        s.start(10);
        let step = s.advance(TICK, TICK, 1, 0);
        assert_eq!((step.skipped, step.due), (0, 1));
        // Three seconds without a frame; meanwhile the server's acks say the inputs stopped.
        for k in 0..8 {
            s.on_ack(10, -1 - k);
        }
        let step = s.advance(TICK * 90, TICK, 1, 0);
        assert_eq!(
            (step.skipped, step.due),
            (90 - MAX_TICKS_PER_FRAME, MAX_TICKS_PER_FRAME)
        );
        assert_eq!(s.present(), Some(100));
        assert_eq!(
            (s.jumps, s.lowest_lead()),
            (0, None),
            "no jump on top of the time"
        );
        s.on_ack(10, -20);
        assert_eq!(
            s.lowest_lead(),
            None,
            "an ack of an input sent before it, still on its way"
        );
        s.on_ack(101, 1);
        assert_eq!(s.lowest_lead(), Some(1));
    }

    #[test]
    fn a_jump_past_a_frame_skips_the_ticks_before_the_last() {
        let mut s = TickSync::default();
        s.start(10);
        s.advance(TICK, TICK, 1, 0);
        s.on_ack(10, -90);
        let step = s.advance(TICK, TICK, 1, 0);
        assert_eq!(s.jumps, 1);
        assert_eq!(
            (step.skipped, step.due),
            (92 - MAX_TICKS_PER_FRAME, MAX_TICKS_PER_FRAME)
        );
        assert_eq!(
            s.present(),
            Some(102),
            "91 ticks late plus the margin, and the frame's tick"
        );
    }

    #[test]
    fn a_jump_once_the_window_has_wrapped_moves_up_its_newest_leads() {
        let mut s = TickSync::default();
        s.start(10);
        s.advance(TICK, TICK, 1, 0);
        // More acks than the window holds (it wraps), a frame, then a few hundred more and a
        // stall that forgets them: the window's newest slots are no longer its first ones.
        for k in 0..LEAD_WINDOW as u32 + 88 {
            s.on_ack(10 + k, 2);
        }
        s.advance(TICK, TICK, 1, 0);
        for k in 0..450 {
            s.on_ack(700 + k, 2);
        }
        s.advance(TICK * 30, TICK, 1, 0);
        let present = s.present().unwrap();
        s.on_ack(present.wrapping_add(1), -1);
        s.advance(TICK, TICK, 1, 0);
        assert_eq!(s.jumps, 1, "an input late by a tick jumps");
        assert_eq!(
            s.lowest_of(RECENT_ACKS),
            Some(1),
            "its lead moved up with the jump"
        );
        for _ in 0..30 {
            s.advance(TICK, TICK, 1, 0);
        }
        assert_eq!(s.jumps, 1, "the jump made up the shortfall: no jump again");
    }

    #[test]
    fn a_stall_right_after_a_stall_is_one_too() {
        let mut s = TickSync::default();
        s.start(10);
        for k in 0..60 {
            s.on_ack(10 + k, 1);
            s.advance(TICK, TICK, 1, 0);
        }
        // Four seconds without a frame, then two seconds without a frame again: the acks that
        // arrive meanwhile tell of inputs late by the second stall, which its frame's time
        // makes up.
        s.advance(TICK * 120, TICK, 1, 0);
        let resumed = s.present().unwrap();
        for late in 1..=56 {
            s.on_ack(resumed, -late);
        }
        let before = s.present().unwrap();
        let step = s.advance(TICK * 60, TICK, 1, 0);
        assert_eq!(s.jumps, 0, "no jump on top of the time");
        assert_eq!(step.skipped + step.due, 60);
        assert_eq!(s.present(), Some(before.wrapping_add(60)));
    }

    #[test]
    fn with_an_input_delay_the_acks_of_a_stall_are_forgotten_by_their_stamps() {
        let mut s = TickSync::default();
        s.set_input_delay(2);
        s.start(10);
        for k in 0..60 {
            s.on_ack(12 + k, 1);
            s.advance(TICK, TICK, 1, 0);
        }
        // The last input sent before the stall is stamped two ticks after the present.
        let stamped = s.present().unwrap().wrapping_add(2);
        s.advance(TICK * 90, TICK, 1, 0);
        // Its acks, sent while the client stalled, say it arrived ever later.
        s.on_ack(stamped, -85);
        s.advance(TICK, TICK, 1, 0);
        assert_eq!(s.jumps, 0, "the stall's time made it up: no jump");
        s.on_ack(stamped.wrapping_add(100), -1);
        s.advance(TICK, TICK, 1, 0);
        assert_eq!(s.jumps, 1, "an input sent after the stall, late: a jump");
    }

    #[test]
    fn the_present_stays_past_the_newest_snapshot_whatever_the_leads() {
        let mut s = TickSync::default();
        s.set_input_delay(3);
        s.start(10);
        // Inputs arrive early all along (the delay alone covers the round trip): the clock
        // slows down while it is ahead of the snapshots, not into them.
        for k in 0..600u32 {
            let present = s.present().unwrap();
            s.on_ack(present.wrapping_add(3), 4);
            let snapshot = 10 + k;
            s.advance(TICK, TICK, 0, snapshot);
            assert!(
                tick_after(s.present().unwrap(), snapshot),
                "frame {k}: {:?} not past {snapshot}",
                s.present()
            );
        }
        // A snapshot newer than the present (a burst after a pause of the link) jumps past it.
        let present = s.present().unwrap();
        s.advance(TICK, TICK, 0, present.wrapping_add(5));
        assert_eq!(s.present(), Some(present.wrapping_add(6)));
    }

    #[test]
    fn the_frame_the_clock_starts_in_counts_one_tick_however_long() {
        let mut s = TickSync::default();
        s.start(100);
        // A loading pause of three seconds ends the frame the prediction starts in: the start
        // was placed from the snapshot that came after it.
        let step = s.advance(TICK * 90, TICK, 1, 95);
        assert_eq!((step.skipped, step.due), (0, 1));
        assert_eq!(s.present(), Some(100));
        let step = s.advance(TICK * 3, TICK, 1, 96);
        assert_eq!(
            (step.skipped, step.due),
            (0, 3),
            "the frames after it count whole"
        );
    }

    #[test]
    fn frames_that_are_all_long_are_not_stalls() {
        let mut s = TickSync::default();
        s.start(10);
        // Five frames a second at 30 ticks: six ticks each.
        for k in 0..20 {
            s.on_ack(10 + 6 * k, 1);
            s.advance(TICK * 6, TICK, 1, 0);
        }
        assert!(s.lowest_lead().is_some(), "acks kept");
        s.on_ack(200, -3);
        s.advance(TICK * 6, TICK, 1, 0);
        assert_eq!(s.jumps, 1, "a late input still jumps");
    }

    #[test]
    fn an_ack_of_any_lead_neither_panics_nor_jumps_further_than_the_cap() {
        let mut s = TickSync::default();
        s.start(10);
        s.on_ack(10, i32::MIN);
        let step = s.advance(TICK, TICK, i32::from(u8::MAX), 0);
        assert_eq!(step.skipped + step.due, MAX_JUMP_TICKS + 1);
        s.on_ack(MAX_JUMP_TICKS + 20, i32::MAX);
        s.advance(TICK, TICK, 0, 0);
    }

    #[test]
    fn a_jump_goes_at_least_back_to_the_usual_distance_ahead_of_the_snapshots() {
        let mut s = TickSync::default();
        s.start(10);
        // A while 6 ticks ahead of the newest snapshot.
        for _ in 0..200 {
            let snapshot = s.present().unwrap().wrapping_add(1).wrapping_sub(6);
            s.advance(TICK, TICK, 1, snapshot);
        }
        let before = s.present().unwrap();
        // 30 frames unseen (the game loop clamped its dt): the snapshots are 30 ticks further
        // on, and the acks of the stall say the inputs are late by less than that.
        s.on_ack(before, -20);
        let snapshot = before.wrapping_add(30).wrapping_sub(5);
        let step = s.advance(TICK, TICK, 1, snapshot);
        assert_eq!(s.jumps, 1);
        assert_eq!(s.present(), Some(snapshot.wrapping_add(6)), "{step:?}");
    }
}

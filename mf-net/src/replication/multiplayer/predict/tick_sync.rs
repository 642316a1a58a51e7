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
//! keeps the lead high enough for the bursts the window has seen. Only a large shortfall (inputs
//! [`CATCH_UP_TICKS`] or more late, as at the start) jumps, and only forward: the ticks are
//! simulated at once. After a jump, acks of inputs sent before it are ignored.

use std::time::Duration;

use crate::tick::tick_after;

/// Acks whose lowest lead must be above the margin for the clock to slow down (about 17
/// seconds at 30 Hz: the loss bursts and jitter of that long stay covered).
pub(crate) const LEAD_WINDOW: usize = 512;

/// The newest acks whose lowest lead below the margin speeds the clock up (or jumps it).
pub(crate) const RECENT_ACKS: usize = 8;

/// Most the clock runs faster or slower than the server's: 5 %.
pub(crate) const MAX_SKEW: f64 = 0.05;

/// Lead shortfall (ticks late) from which the client jumps ahead instead of speeding up.
pub(crate) const CATCH_UP_TICKS: i32 = 4;

/// Most ticks one frame simulates (a frame after a long stall does not simulate seconds).
pub(crate) const MAX_TICKS_PER_FRAME: u32 = 16;

/// The client's simulation clock (see the [module docs](self)).
#[derive(Debug)]
pub(crate) struct TickSync {
    /// The newest tick simulated; `None` before the first.
    present: Option<u32>,
    accumulator: Duration,
    leads: [i32; LEAD_WINDOW],
    lead_count: usize,
    lead_next: usize,
    /// Acks of inputs up to this tick were sent before the last jump: ignored.
    ignore_through: Option<u32>,
    /// The clock's current rate relative to the server's (1 ± [`MAX_SKEW`]).
    rate: f64,
    /// Times it jumped ahead.
    pub(crate) jumps: u64,
}

impl Default for TickSync {
    fn default() -> Self {
        Self {
            present: None,
            accumulator: Duration::ZERO,
            leads: [0; LEAD_WINDOW],
            lead_count: 0,
            lead_next: 0,
            ignore_through: None,
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

    /// An input ack: inputs up to `newest` arrived with `lead` at the lowest.
    pub(crate) fn on_ack(&mut self, newest: u32, lead: i32) {
        if self.ignore_through.is_some_and(|t| !tick_after(newest, t)) {
            return;
        }
        self.leads[self.lead_next] = lead;
        self.lead_next = (self.lead_next + 1) % LEAD_WINDOW;
        self.lead_count = (self.lead_count + 1).min(LEAD_WINDOW);
    }

    /// The first tick: `start` (the newest server tick seen plus a guess of the lead).
    pub(crate) fn start(&mut self, start: u32) {
        self.present = Some(start.wrapping_sub(1));
        self.accumulator = Duration::ZERO;
    }

    /// The frame advanced by `dt`: how many ticks to simulate now, steering toward a lowest lead
    /// of `margin` ticks. Advances the present by that many.
    pub(crate) fn advance(&mut self, dt: Duration, interval: Duration, margin: i32) -> u32 {
        let Some(present) = self.present else {
            return 0;
        };
        let mut extra = 0;
        self.rate = 1.0;
        if let (Some(recent), Some(lowest)) = (self.lowest_of(RECENT_ACKS), self.lowest_lead()) {
            let error = if recent < margin {
                recent - margin
            } else {
                (lowest - margin).max(0)
            };
            if recent < 0 || error <= -CATCH_UP_TICKS {
                // Late (the server went without an input), or far behind: jump ahead by the
                // shortfall. The leads kept move up with it; acks of inputs sent before the
                // jump, still on their way, are ignored.
                extra = u32::try_from(-error).unwrap_or(0);
                self.ignore_through = Some(present.wrapping_add(extra));
                for lead in &mut self.leads[..self.lead_count] {
                    *lead = lead.saturating_add(-error);
                }
                self.jumps += 1;
            } else if error < 0 {
                self.rate = 1.0 + MAX_SKEW * f64::from(-error).min(2.0) / 2.0;
            } else if error > 1 {
                self.rate = 1.0 - MAX_SKEW * f64::from(error - 1).min(2.0) / 2.0;
            }
        }
        self.accumulator += dt.mul_f64(self.rate);
        let mut due = 0;
        while self.accumulator >= interval && due < MAX_TICKS_PER_FRAME {
            self.accumulator -= interval;
            due += 1;
        }
        if due == MAX_TICKS_PER_FRAME {
            self.accumulator = self.accumulator.min(interval);
        }
        let due = (due + extra).min(MAX_TICKS_PER_FRAME);
        self.present = Some(present.wrapping_add(due));
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_micros(33_333);

    #[test]
    fn runs_at_the_server_rate_without_acks() {
        let mut s = TickSync::default();
        assert_eq!(s.advance(TICK, TICK, 1), 0, "not started");
        s.start(100);
        let due: u32 = (0..30).map(|_| s.advance(TICK, TICK, 1)).sum();
        assert!((29..=30).contains(&due), "{due}");
    }

    #[test]
    fn late_inputs_jump_ahead_and_slightly_early_ones_speed_up() {
        let mut s = TickSync::default();
        s.start(10);
        s.on_ack(9, -6);
        let due = s.advance(TICK, TICK, 1);
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
        s.advance(Duration::ZERO, TICK, 1);
        assert!(s.rate > 1.0, "on time but under the margin: faster");
        assert_eq!(s.jumps, 1, "a lead of 0 is on time: no jump");
        s.on_ack(present.wrapping_add(2), -1);
        s.advance(Duration::ZERO, TICK, 1);
        assert_eq!(s.jumps, 2, "an input late by a tick jumps");
        let present = s.present().unwrap();
        for k in 0..RECENT_ACKS as u32 {
            s.on_ack(present.wrapping_add(1 + k), 5);
        }
        s.advance(Duration::ZERO, TICK, 1);
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
        let due: u32 = (0..60).map(|_| s.advance(TICK, TICK, 1)).sum();
        assert!(s.rate < 1.0);
        assert!((56..60).contains(&due), "{due}");
        assert!(tick_after(s.present().unwrap(), before));
    }
}

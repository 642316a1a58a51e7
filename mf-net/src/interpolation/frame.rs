//! [`FrameSnapshots`]: how the runtime's [`ServerClock`] takes the snapshots of one frame.

use std::time::Duration;

use super::{ClockUpdate, ServerClock};

/// The snapshots a client received in its current frame, as the runtime's [`ServerClock`]
/// takes them: the clock is judged against the **newest snapshot of the frame**, the older
/// ones only feed the interpolation buffers.
///
/// A frame advances the clock by its whole length before it receives. After a long frame (the
/// client hitched while the server ran on), what it receives is the backlog of snapshots sent
/// meanwhile: the oldest up to the frame's length behind the estimate, which is right, the
/// newest at it. Taken one by one ([`ServerClock::on_snapshot`]), the oldest would snap the
/// clock back (over one second of ticks behind) and the others pull it only 10 % each, leaving
/// it far behind. Instead each snapshot of the frame is judged against the estimate the frame
/// began with (`from`), replacing what the ones before it did, so that the newest decides:
///
/// - within one second of ticks: the estimate is pulled [`PULL`](ServerClock::PULL) of the way
///   from `from` towards its tick;
/// - over one second of ticks ahead, or over one second and the frame's length behind (no
///   snapshot sent during the frame is that old: the server stalled): the estimate **snaps** to
///   its tick ([`ClockUpdate::Snapped`]: the caller snaps its buffers). The later snapshots of
///   the frame set the estimate to their ticks, reported as pulls (the buffers were snapped
///   once);
/// - between the two behind (over a second, but the backlog of a long frame may be so old): it
///   is pulled like a close one. If it stays the frame's newest, the server did stall (during
///   the hitch), which is known only once the frame received everything: the next snapshot, in
///   a later frame, snaps the clock.
///
/// In frames of ordinary length (a snapshot or two each) this differs from
/// [`ServerClock::on_snapshot`] only in that two snapshots of one frame pull the estimate once,
/// towards the newer: a stall of the server still snaps it at the first snapshot after it.
/// Deterministic, and it never allocates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FrameSnapshots {
    /// The estimate when the frame began (`None` before the first snapshot), or the first
    /// snapshot's tick when that arrived in this frame.
    from: Option<f64>,
    /// The frame's length, in ticks at the server's rate.
    length: f64,
    /// A snapshot of this frame snapped the clock.
    snapped: bool,
    /// The newest snapshot so far is over a second of ticks behind `from`, but not by more than
    /// the frame's length more.
    behind: bool,
    /// An earlier frame ended `behind`: the next snapshot snaps the clock.
    overdue: bool,
}

impl FrameSnapshots {
    /// Before any frame.
    pub(crate) fn new() -> Self {
        Self {
            from: None,
            length: 0.0,
            snapped: false,
            behind: false,
            overdue: false,
        }
    }

    /// A frame of `dt` began, and `clock` was advanced by it.
    pub(crate) fn begin(&mut self, clock: &ServerClock, dt: Duration) {
        *self = Self {
            from: clock.estimate(),
            length: clock.ticks(dt),
            snapped: false,
            behind: false,
            overdue: self.overdue || self.behind,
        };
    }

    /// A snapshot of `tick` arrived in this frame: moves `clock` (see the
    /// [type documentation](Self)).
    pub(crate) fn on_snapshot(&mut self, clock: &mut ServerClock, tick: u32) -> ClockUpdate {
        if !clock.accept(tick) {
            return ClockUpdate::Stale;
        }
        let Some(from) = self.from.or(clock.estimate()) else {
            clock.start(tick);
            self.from = Some(f64::from(tick));
            return ClockUpdate::Started;
        };
        if self.snapped {
            // The buffers were snapped for this frame already: follow the newest tick.
            let error = clock.snap_to(tick, from);
            return ClockUpdate::Pulled { error };
        }
        let update = if self.overdue {
            let error = clock.snap_to(tick, from);
            ClockUpdate::Snapped { error }
        } else {
            clock.correct(tick, from, clock.one_second() + self.length)
        };
        self.snapped = update.must_clear_buffers();
        self.overdue = false;
        self.behind =
            matches!(update, ClockUpdate::Pulled { error } if error < -clock.one_second());
        update
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// 60 frames a second.
    const FRAME: Duration = Duration::from_nanos(16_666_667);

    /// A clock at `rate` Hz and its frames.
    struct Client {
        clock: ServerClock,
        frame: FrameSnapshots,
    }

    impl Client {
        fn new(rate: u32) -> Self {
            Self {
                clock: ServerClock::new(rate),
                frame: FrameSnapshots::new(),
            }
        }

        /// A frame of `dt` receiving snapshots of `ticks`: their updates.
        fn frame(
            &mut self,
            dt: Duration,
            ticks: impl IntoIterator<Item = u32>,
        ) -> Vec<ClockUpdate> {
            self.clock.advance(dt);
            self.frame.begin(&self.clock, dt);
            ticks
                .into_iter()
                .map(|tick| self.frame.on_snapshot(&mut self.clock, tick))
                .collect()
        }

        fn estimate(&self) -> f64 {
            self.clock.estimate().unwrap()
        }

        /// 30 Hz against 60 frames a second from `tick` for `frames` frames, at the estimate;
        /// returns the next tick.
        fn steady(&mut self, mut tick: u32, frames: u32) -> u32 {
            for frame in 0..frames {
                let ticks = (frame % 2 == 0).then_some(tick);
                tick += u32::from(ticks.is_some());
                let updates = self.frame(FRAME, ticks);
                assert!(
                    updates.iter().all(|u| !u.must_clear_buffers()),
                    "{updates:?}"
                );
            }
            tick
        }
    }

    fn snaps(updates: &[ClockUpdate]) -> usize {
        updates.iter().filter(|u| u.must_clear_buffers()).count()
    }

    #[test]
    fn the_backlog_of_a_hitch_is_judged_by_its_newest_snapshot() {
        let mut c = Client::new(30);
        let tick = c.steady(1000, 120);
        let before = c.estimate();
        // 2 s without a frame while the server ran on: 60 snapshots in the next one.
        let updates = c.frame(Duration::from_secs(2), tick..tick + 60);
        assert_eq!(snaps(&updates), 0, "{:?}", updates[0]);
        assert!(matches!(updates[0], ClockUpdate::Pulled { error } if error < -50.0));
        // Right where it was heading: the newest pulled it 10 % of the way from there.
        let newest = f64::from(tick + 59);
        assert!(
            (c.estimate() - newest).abs() < 1.0,
            "{} vs {newest}",
            c.estimate()
        );
        assert!((c.estimate() - (before + 60.0)).abs() < 1.0);
        // And on as before.
        c.steady(tick + 60, 60);
        assert!((c.estimate() - f64::from(tick + 90)).abs() < 1.0);
    }

    #[test]
    fn a_stall_of_the_server_snaps_at_the_first_snapshot_after_it() {
        let mut c = Client::new(30);
        let tick = c.steady(1000, 120);
        // The server stalls 2 s: frames, no snapshots.
        for _ in 0..120 {
            assert!(c.frame(FRAME, None).is_empty());
        }
        let updates = c.frame(FRAME, [tick, tick + 1]);
        assert!(matches!(updates[0], ClockUpdate::Snapped { error } if error < -50.0));
        // The second of the frame follows, without snapping the buffers again.
        assert_eq!(snaps(&updates), 1);
        assert_eq!(c.estimate(), f64::from(tick + 1));
        c.steady(tick + 2, 10);
    }

    #[test]
    fn a_stall_during_a_hitch_snaps_at_the_next_snapshot() {
        let mut c = Client::new(30);
        let tick = c.steady(1000, 120);
        // The client hitched 2 s, and the server stalled for the last 1.5 s of it: its
        // newest snapshot is 45 ticks behind, which the frame's length might explain.
        let updates = c.frame(Duration::from_secs(2), tick..tick + 15);
        assert_eq!(snaps(&updates), 0);
        assert!(c.estimate() > f64::from(tick + 40), "only pulled");
        // It was the newest: the next snapshot snaps the clock.
        let updates = c.frame(FRAME, [tick + 15]);
        assert_eq!(snaps(&updates), 1, "{updates:?}");
        assert_eq!(c.estimate(), f64::from(tick + 15));
        c.steady(tick + 16, 10);
        // Nothing at all received during the hitch: the first snapshot after it snaps.
        let mut c = Client::new(30);
        let tick = c.steady(1000, 120);
        assert!(c.frame(Duration::from_secs(2), None).is_empty());
        assert_eq!(snaps(&c.frame(FRAME, [tick])), 1);
    }

    #[test]
    fn a_client_far_behind_snaps_once_to_the_newest_snapshot_of_the_frame() {
        let mut c = Client::new(30);
        let tick = c.steady(1000, 120);
        // Suspended 2 s, the game clamped the frame to 0.1 s: the backlog is far ahead.
        let updates = c.frame(Duration::from_millis(100), tick + 50..tick + 60);
        assert_eq!(snaps(&updates), 1);
        assert!(updates[0].must_clear_buffers());
        assert_eq!(c.estimate(), f64::from(tick + 59));
        // Stale snapshots change nothing.
        assert_eq!(c.frame(FRAME, [tick + 59]), [ClockUpdate::Stale]);
        c.steady(tick + 60, 10);
    }

    #[test]
    fn snapshots_of_one_frame_pull_from_where_it_began() {
        let mut c = Client::new(60);
        assert_eq!(c.frame(FRAME, [100, 103]).len(), 2);
        // Started at the first, pulled from it towards the second.
        assert!((c.estimate() - 100.3).abs() < 1e-9);
        c.frame(Duration::from_millis(100), [104, 110]); // from 106.3
        assert!((c.estimate() - (106.3 + 0.1 * 3.7)).abs() < 1e-9);
    }
}

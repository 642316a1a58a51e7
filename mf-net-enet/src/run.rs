//! A real-time loop around the sans-IO core: [`FixedStep`] reads the clock and sleeps so that
//! frames come at a fixed rate, and [`run()`] drives a [`Multiplayer`] with it, calling
//! [`begin_frame`](Multiplayer::begin_frame), the game's frame and
//! [`end_frame`](Multiplayer::end_frame), so no game writes that loop by hand.
//!
//! Every frame is given the same `dt` (`1 / frames_per_second`): game code that moves things by
//! `speed * dt` moves them at the same speed on a fast machine and a slow one. A frame that
//! comes late is caught up by running the missed frames back to back (at most
//! [`FixedStep::MAX_CATCH_UP`]; beyond that, the lost time is dropped rather than sped through).

use std::ops::ControlFlow;
use std::thread::sleep;
use std::time::{Duration, Instant};

use mf_net::replication::Multiplayer;
use mf_net::transport::Transport;

/// A clock that paces frames at a fixed rate.
#[derive(Debug, Clone)]
pub struct FixedStep {
    dt: Duration,
    next: Instant,
}

impl FixedStep {
    /// Frames run back to back, at most, to catch up after a stall.
    pub const MAX_CATCH_UP: u32 = 5;

    /// `frames_per_second` frames a second (at least 1), the first one due now.
    pub fn new(frames_per_second: u32) -> Self {
        Self {
            dt: Duration::from_secs(1) / frames_per_second.max(1),
            next: Instant::now(),
        }
    }

    /// The time every frame covers.
    pub fn dt(&self) -> Duration {
        self.dt
    }

    /// Sleeps until the next frame is due, then returns how many frames to run now: 1 on
    /// time, more after a stall (at most [`MAX_CATCH_UP`](Self::MAX_CATCH_UP)).
    pub fn wait(&mut self) -> u32 {
        let now = Instant::now();
        if now < self.next {
            sleep(self.next - now);
        }
        let now = Instant::now();
        let mut frames = 0;
        while self.next <= now && frames < Self::MAX_CATCH_UP {
            self.next += self.dt;
            frames += 1;
        }
        if self.next <= now {
            // Too far behind: drop the time instead of running through it.
            self.next = now + self.dt;
        }
        frames.max(1)
    }
}

/// Runs `mp` at `frames_per_second` until `frame` returns [`ControlFlow::Break`]: each frame
/// calls `begin_frame(dt)`, then `frame(mp, dt)` (the game: events, input, RPCs, field
/// writes), then `end_frame()`. Returns the break value. The caller closes the transport
/// afterwards (for ENet, [`EnetTransport::begin_close`](crate::EnetTransport::begin_close) or
/// [`Multiplayer::stop`]).
///
/// Every frame is given the same `dt` (`1 / frames_per_second`), so game code that moves things
/// by `speed * dt` moves them at the same speed on any machine; late frames are caught up as
/// [`FixedStep::wait`] says. For a loop of your own (several instances in one process), use
/// [`FixedStep`] directly.
///
/// ```no_run
/// use std::ops::ControlFlow;
/// use mf_net::bus::MessageRegistry;
/// use mf_net::prelude::*;
/// use mf_net_enet::{run, EnetTransport};
///
/// let mut server: Multiplayer<EnetTransport> = Multiplayer::new(SceneLibrary::new(), MultiplayerConfig::default());
/// server.start_server(EnetTransport::listen_any(7777, 8).unwrap(), MessageRegistry::new(1)).unwrap();
/// // A minute of serving, then stop.
/// let mut frames = 0;
/// run(&mut server, 60, |mp, _dt| {
///     while let Some(event) = mp.next_event() {
///         println!("{event:?}");
///     }
///     frames += 1;
///     if frames == 60 * 60 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
/// });
/// server.stop();
/// ```
pub fn run<T, B>(
    mp: &mut Multiplayer<T>,
    frames_per_second: u32,
    mut frame: impl FnMut(&mut Multiplayer<T>, Duration) -> ControlFlow<B>,
) -> B
where
    T: Transport + 'static,
{
    let mut clock = FixedStep::new(frames_per_second);
    let dt = clock.dt();
    loop {
        for _ in 0..clock.wait() {
            mp.begin_frame(dt);
            let flow = frame(mp, dt);
            mp.end_frame();
            if let ControlFlow::Break(value) = flow {
                return value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mf_net::bus::MessageRegistry;
    use mf_net::replication::MultiplayerConfig;
    use mf_net::scene::SceneLibrary;
    use mf_net::transport::loopback::{LoopbackNetwork, LoopbackTransport};

    #[test]
    fn run_drives_frames_until_the_game_breaks() {
        let net = LoopbackNetwork::new();
        let mut mp: Multiplayer<LoopbackTransport> =
            Multiplayer::new(SceneLibrary::new(), MultiplayerConfig::default());
        let listen = net.listen("run", 1).expect("a fresh network");
        mp.start_server(listen, MessageRegistry::new(1))
            .expect("the server starts");
        let start = Instant::now();
        let mut dts = Vec::new();
        let frames = run(&mut mp, 100, |mp, dt| {
            assert!(mp.is_running());
            dts.push(dt);
            if dts.len() == 12 {
                ControlFlow::Break(dts.len())
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!(frames, 12);
        assert!(dts.iter().all(|dt| *dt == Duration::from_millis(10)));
        // Twelve frames at 100 Hz: 110 ms from the first to the last; 10 network ticks (30 Hz)
        // take 333 ms, so 120 ms of frames make 3 ticks.
        assert!(start.elapsed() >= Duration::from_millis(100));
        assert_eq!(mp.tick(), 3);
    }

    #[test]
    fn frames_come_at_the_rate_asked_for() {
        let mut clock = FixedStep::new(100);
        assert_eq!(clock.dt(), Duration::from_millis(10));
        let start = Instant::now();
        let mut frames = 0;
        while frames < 10 {
            frames += clock.wait();
        }
        let elapsed = start.elapsed();
        // The first frame is due at once, the tenth 90 ms later.
        assert!(elapsed >= Duration::from_millis(85), "{elapsed:?}");
    }

    #[test]
    fn a_stall_is_caught_up_within_bounds() {
        let mut clock = FixedStep::new(100);
        assert_eq!(clock.wait(), 1);
        sleep(Duration::from_millis(35));
        // Three or four frames were missed: they run back to back.
        let frames = clock.wait();
        assert!((3..=5).contains(&frames), "{frames}");
        sleep(Duration::from_millis(200));
        // Twenty missed: at most MAX_CATCH_UP, and the rest is dropped.
        assert_eq!(clock.wait(), FixedStep::MAX_CATCH_UP);
        // The next one is due a step from the drop: waited for, not run at once (two if this
        // thread overslept by a step).
        let start = Instant::now();
        assert!((1..=2).contains(&clock.wait()));
        assert!(start.elapsed() >= Duration::from_millis(5));
    }
}

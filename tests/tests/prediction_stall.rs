#![allow(clippy::unwrap_used)]
//! A predicting client that stalls (a loading hitch, a debugger, a window in the background:
//! no frame at all for a while, the server going on) recovers: within 2 s of resuming its
//! inputs arrive on time again, and once it stops its player is where the server's is, exactly.
//! Stalls of 10, 30, 90 and 300 frames (10 s), on a clean 50 ms link and at 30 % loss with
//! jitter, resumed both ways a game loop may: with the whole stall as the next frame's `dt`, or
//! with `dt` clamped to one frame (the clock then learns it is late only from the server).

use std::time::Duration;

use mf_net::prediction::InputStats;
use mf_net::prelude::*;
use mf_net::transport::simulated::NetworkConditions;

mod prediction_common;
use prediction_common::*;

/// What the game loop passes to the first `begin_frame` after the stall.
#[derive(Debug, Clone, Copy)]
enum Resume {
    /// The whole time since the last frame.
    WholeStall,
    /// One frame's time: the loop clamps `dt`.
    Clamped,
}

fn clean() -> NetworkConditions {
    NetworkConditions::laggy(Duration::from_millis(50), Duration::ZERO)
}

fn lossy() -> NetworkConditions {
    NetworkConditions::laggy(Duration::from_millis(50), Duration::from_millis(15)).with_loss(0.3)
}

/// Walks for 20 s (the clock learns the link), stalls the client for `frames` frames, resumes it as `resume` says and gives it 2 s;
/// then returns the server's counts of its inputs over the next 10 s of walking (the
/// difference), after checking that at rest the two ends agree exactly.
fn stall(link: NetworkConditions, frames: u32, resume: Resume) -> InputStats {
    let config = MultiplayerConfig::default();
    let mut game = Game::new(config, Some(link));
    let dir = |frame: u32| if frame % 40 < 20 { 1 } else { -1 };
    for frame in 0..600 {
        game.frame(dir(frame), walk);
    }
    for _ in 0..frames {
        game.server_frame(walk);
    }
    let dt = match resume {
        Resume::WholeStall => TICK * (frames + 1),
        Resume::Clamped => TICK,
    };
    game.frame_with(1, walk, dt);
    for frame in 0..60 {
        game.frame(dir(frame), walk);
    }
    let peer = game.client().local_peer_id();
    let inputs = |game: &Game| game.world.server.peer_stats(peer).unwrap().inputs;
    let before = inputs(&game);
    for frame in 0..300 {
        game.frame(dir(frame), walk);
    }
    let after = inputs(&game);
    for _ in 0..60 {
        game.frame(0, walk);
    }
    let stats = game.client().stats().prediction;
    let label = format!("{frames} frames {resume:?} {link:?}: {stats:?} {after:?}");
    assert!(game.client().is_running(), "{label}");
    assert_eq!(game.client_x(), game.server_x(), "{label}");
    let measured = InputStats {
        on_time: after.on_time - before.on_time,
        missing: after.missing - before.missing,
        late: after.late - before.late,
        dropped: after.dropped - before.dropped,
        buffered: after.buffered,
        views_out_of_window: after.views_out_of_window - before.views_out_of_window,
    };
    eprintln!("{label}\n  after 2 s: {measured:?}");
    measured
}

/// On a clean link, every input of the 10 s measured arrives on time.
fn recovers_on_a_clean_link(frames: u32) {
    for resume in [Resume::WholeStall, Resume::Clamped] {
        let m = stall(clean(), frames, resume);
        assert_eq!((m.missing, m.late), (0, 0), "{frames} {resume:?}: {m:?}");
        assert!(m.on_time >= 290, "{frames} {resume:?}: {m:?}");
    }
}

/// At 30 % loss with jitter, 99 % of the inputs arrive on time. (A clamped stall loses the
/// slack the clock had learned for loss bursts: it learns it again, an input or two late.)
fn recovers_on_a_lossy_link(frames: u32) {
    for resume in [Resume::WholeStall, Resume::Clamped] {
        let m = stall(lossy(), frames, resume);
        assert!(
            m.missing * 100 <= m.on_time && m.on_time >= 290,
            "{frames} {resume:?}: {m:?}"
        );
    }
}

#[test]
fn a_stall_of_10_frames_recovers() {
    recovers_on_a_clean_link(10);
    recovers_on_a_lossy_link(10);
}

#[test]
fn a_stall_of_30_frames_recovers() {
    recovers_on_a_clean_link(30);
    recovers_on_a_lossy_link(30);
}

#[test]
fn a_stall_of_90_frames_recovers() {
    recovers_on_a_clean_link(90);
    recovers_on_a_lossy_link(90);
}

#[test]
fn a_stall_of_300_frames_recovers() {
    recovers_on_a_clean_link(300);
    recovers_on_a_lossy_link(300);
}

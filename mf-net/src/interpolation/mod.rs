//! Client interpolation: showing `#[replicated(interpolate)]` members smoothly, a little in the
//! past, from snapshots that arrive late, out of order or not at all.
//!
//! The pieces, each usable alone and all sans-IO (time is passed in, nothing allocates after
//! creation):
//!
//! - [`Interpolate`]: how a type blends between two values (linear for `f32`, `f64` and, with
//!   the `glam` feature, `Vec2`/`Vec3`/`Vec4`; shortest-path slerp for `Quat`), and whether it
//!   may be extrapolated ([`Interpolate::EXTRAPOLATE`]; rotations are held instead).
//! - [`InterpolationBuffer`]: the last [`CAPACITY`](InterpolationBuffer::CAPACITY) (32)
//!   samples of one member, a fixed ring; [`sample`](InterpolationBuffer::sample) blends, holds
//!   or extrapolates (capped) at a render tick.
//! - [`ServerClock`]: the client's estimate of the server tick, advanced with frame time and
//!   pulled 10 % towards every snapshot's tick; it snaps (and says that buffers must be snapped
//!   to their newest samples) when it is off by more than one second of ticks.
//! - [`AdaptiveDelay`]: an optional interpolation delay derived from the spacing and jitter of
//!   snapshot arrivals, bounded by [`AdaptiveDelayConfig`].
//! - [`InterpolationTimeline`]: the clock, the delay and the configuration together; what a
//!   client runtime calls once per frame and once per snapshot.
//!
//! # How a client uses them
//!
//! ```
//! use std::time::Duration;
//! use mf_net::interpolation::{InterpolationBuffer, InterpolationConfig, InterpolationTimeline};
//!
//! let mut timeline = InterpolationTimeline::new(InterpolationConfig::default(), 60);
//! let mut x = InterpolationBuffer::<f32>::new();
//! let mut known_until = 0; // per node: the newest tick up to which it is known
//! let frame = Duration::from_micros(16_667);
//! for tick in 1..=30u32 {
//!     // A snapshot of `tick` arrives and carries `x` (it moved by 0.5 per tick).
//!     if timeline.on_snapshot(tick).must_clear_buffers() {
//!         x.retain_newest();
//!     }
//!     x.push_with_hold(known_until, tick, tick as f32 * 0.5);
//!     known_until = tick;
//!     // The frame: advance the clock, then blend at the render tick.
//!     timeline.advance(frame);
//!     let render_tick = timeline.render_tick().expect("a snapshot has arrived");
//!     let shown = x.sample(render_tick, known_until, timeline.max_extrapolation_ticks());
//!     assert!(shown.is_some());
//! }
//! ```
//!
//! # The rules (see the book's interpolation section)
//!
//! - Clients show interpolated members `delay` (default 0.1 s, about three snapshots at 30 Hz)
//!   behind their estimate of the server tick: `render_tick = estimate − delay · tick_rate`.
//! - Snapshots carry only changed members, so a member absent from snapshots was still. When it
//!   changes again, a **hold sample** (its previous value) is first inserted at the tick up to
//!   which its node was known ([`InterpolationBuffer::push_with_hold`]), so motion resumes from
//!   the right moment instead of drifting from when it stopped.
//! - When the clock snaps (off by over a second of ticks: a stall), each member shows its
//!   newest sample and its buffer keeps only that one, at its tick
//!   ([`InterpolationBuffer::retain_newest`]), so a member still since then resumes from the
//!   right moment through its hold sample as ever. The runtime judges the clock against the
//!   newest snapshot of each frame, so the backlog of snapshots a long frame receives (the
//!   client hitched while the server ran on) neither snaps it nor drags it behind.
//! - A node is known up to the newer of the last snapshot that carried it and the last
//!   untruncated snapshot (which proves every absent node was still). Keeping that tick per node
//!   is the runtime's job; the buffer takes it as an argument.
//! - Past the newest sample, a member **holds** if its node is known past that sample (it was
//!   still); otherwise data is late and it **extrapolates** along its last velocity for at most
//!   `max_extrapolation` (default 0.25 s), then stops. Types with
//!   [`EXTRAPOLATE`](Interpolate::EXTRAPOLATE) `= false` (quaternions) hold instead.
//! - Spawn state applies immediately, and `enabled = false` snaps every snapshot: neither goes
//!   through a buffer.

mod adaptive;
mod buffer;
mod clock;
mod config;
mod frame;
#[cfg(feature = "glam")]
mod glam_impls;
mod interpolate;
pub(crate) mod member;
mod timeline;

pub use adaptive::AdaptiveDelay;
pub use buffer::InterpolationBuffer;
pub use clock::{ClockUpdate, ServerClock};
pub use config::{AdaptiveDelayConfig, InterpolationConfig};
pub use interpolate::Interpolate;
pub use timeline::InterpolationTimeline;

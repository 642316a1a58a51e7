//! Client-side prediction, inputs and lag compensation.

pub(crate) mod client;
mod client_run;
mod config;
pub(crate) mod input_buffer;
pub(crate) mod input_wire;
mod lag;
mod simulation;
mod stats;
mod step;
mod tick_sync;

pub use config::{MissingInput, PredictionConfig};
pub use input_wire::{MAX_INPUT_BYTES, MAX_INPUT_REDUNDANCY};
pub use lag::LagHistory;
pub use simulation::{Divergence, Simulation};
pub use stats::{InputStats, PredictionStats};
pub use step::Step;

//! Client-side prediction, inputs and lag compensation.

pub(crate) mod client;
mod config;
pub(crate) mod input_buffer;
pub(crate) mod input_wire;
mod lag;
mod simulation;
mod stats;
mod tick_sync;

pub use config::{MissingInput, PredictionConfig};
pub use input_wire::{MAX_INPUT_BYTES, MAX_INPUT_REDUNDANCY};
pub use lag::LagHistory;
pub use simulation::{Divergence, Simulation, Step};
pub use stats::{InputStats, PredictionStats};

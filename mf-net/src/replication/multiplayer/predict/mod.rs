//! The runtime's side of inputs and prediction: the settings, the input messages, the server's
//! per-client input buffer, the client's simulation clock and prediction state, and the
//! counters. [`crate::prediction`] builds the public driver, `Simulation`, on them.

pub(crate) mod client;
mod config;
pub(crate) mod input_buffer;
pub(crate) mod input_wire;
mod stats;
pub(crate) mod tick_sync;

pub use client::Misprediction;
pub use config::{MissingInput, PredictionConfig};
pub use input_wire::{MAX_INPUT_BYTES, MAX_INPUT_REDUNDANCY};
pub use stats::{InputStats, PredictionStats};

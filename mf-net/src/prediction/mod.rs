//! Client-side prediction, inputs and lag compensation: [`Simulation`] runs a game's step at
//! the server's tick rate on both ends with tick-stamped inputs, predicting a client's own
//! `#[replicated(predict)]` members and rolling them back when the server disagrees;
//! [`LagHistory`] lets the server check hits as a client saw the world.

mod client_run;
mod lag;
mod simulation;
mod step;

pub use crate::replication::client::prediction::Misprediction;
pub use crate::replication::shared::input_wire::{MAX_INPUT_BYTES, MAX_INPUT_REDUNDANCY};
pub use crate::replication::shared::prediction_config::{MissingInput, PredictionConfig};
pub use crate::replication::shared::prediction_stats::{InputStats, PredictionStats};
pub use lag::LagHistory;
pub use simulation::{Divergence, Simulation};
pub use step::Step;

//! Client-side prediction, inputs and lag compensation: [`Simulation`] runs a game's step at
//! the server's tick rate on both ends with tick-stamped inputs, predicting a client's own
//! `#[replicated(predict)]` members and rolling them back when the server disagrees;
//! [`LagHistory`] lets the server check hits as a client saw the world.

mod client_run;
mod lag;
mod simulation;
mod step;

pub use crate::replication::multiplayer::predict::{
    InputStats, Misprediction, MissingInput, PredictionConfig, PredictionStats, MAX_INPUT_BYTES,
    MAX_INPUT_REDUNDANCY,
};
pub use lag::LagHistory;
pub use simulation::{Divergence, Simulation};
pub use step::Step;

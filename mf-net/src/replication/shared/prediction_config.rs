//! [`PredictionConfig`]: how inputs travel and how a client predicts.

use std::time::Duration;

/// What the server simulates for a client whose input for a tick has not arrived (lost beyond
/// the redundancy, or late).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingInput {
    /// The client's last input that did arrive (held keys stay held), for at most `max_ticks`
    /// ticks in a row; after that the input type's `Default`, so that a client whose inputs
    /// stopped (it froze, or its link did) does not run on forever. The default:
    /// `RepeatLast { max_ticks: 15 }` (half a second at 30 Hz).
    RepeatLast {
        /// Missing ticks in a row that repeat the last input.
        max_ticks: u32,
    },
    /// The input type's `Default` (nothing pressed).
    DefaultInput,
}

impl Default for MissingInput {
    fn default() -> Self {
        Self::RepeatLast { max_ticks: 15 }
    }
}

/// Settings of the input pipeline and of client-side prediction
/// ([`MultiplayerConfig::prediction`](crate::replication::MultiplayerConfig::prediction)); they
/// take effect when a [`Simulation`](crate::prediction::Simulation) runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PredictionConfig {
    /// Inputs each input packet carries: the tick's own and the ones before it, so that the
    /// server still gets a tick's input when that many packets in a row are lost
    /// (1–[`MAX_INPUT_REDUNDANCY`](crate::prediction::MAX_INPUT_REDUNDANCY)). Default 8: at 30 % loss a
    /// tick's input is lost with probability 0.3⁸ ≈ 7·10⁻⁵.
    pub input_redundancy: u8,
    /// Ticks between sampling an input and simulating it, on both ends (default 0). A delay of
    /// a tick or two hides that much latency without prediction, at the cost of
    /// responsiveness.
    pub input_delay: u32,
    /// What the server simulates for a missing input (default
    /// [`RepeatLast`](MissingInput::RepeatLast) for up to 15 ticks).
    pub missing_input: MissingInput,
    /// Client: ticks by which its inputs should arrive before the server simulates them, at
    /// the worst of the recent ones (default 1). The client's clock steers toward it.
    pub lead_margin: u8,
    /// Client: ticks of predicted history kept per predicted node, and so the deepest rollback
    /// (rounded up to a power of two; default 64, two seconds at 30 Hz), and never fewer than
    /// about two seconds of ticks (256 at 128 Hz): the server remembers its snapshots that long,
    /// so a confirmation can be that old. A confirmed tick older than the history is not
    /// compared: the next confirmation within it is.
    pub history_ticks: u32,
    /// Client: how long a correction's visual offset takes to fade (linearly) for predicted
    /// members that are also `interpolate`; zero shows corrections at once. Default 150 ms.
    pub smoothing: Duration,
    /// Client: re-simulates every tick a second time from the tick before and compares (a
    /// determinism check in the spirit of GGRS's sync test; see
    /// [`Simulation::divergence`](crate::prediction::Simulation::divergence)). Doubles the step cost; for
    /// tests. Default `false`.
    pub check_determinism: bool,
}

impl Default for PredictionConfig {
    fn default() -> Self {
        Self {
            input_redundancy: 8,
            input_delay: 0,
            missing_input: MissingInput::default(),
            lead_margin: 1,
            history_ticks: 64,
            smoothing: Duration::from_millis(150),
            check_determinism: false,
        }
    }
}

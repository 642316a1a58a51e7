//! [`PredictionStats`] (a client's) and [`InputStats`] (the server's, per client).

/// A client's prediction counters
/// ([`NetworkStats::prediction`](crate::replication::NetworkStats::prediction)), since it
/// connected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PredictionStats {
    /// Ticks simulated ahead (each once, re-simulations not counted).
    pub ticks_predicted: u64,
    /// Inputs sent (one per tick simulated; each packet also repeats the ones before).
    pub inputs_sent: u64,
    /// Rollbacks: frames whose confirmed server state differed from what this client had
    /// predicted for that tick, and which therefore restored it and re-simulated to the
    /// present.
    pub rollbacks: u64,
    /// Ticks re-simulated by those rollbacks.
    pub resimulated_ticks: u64,
    /// The deepest rollback, in ticks (the largest correction: how far back the prediction
    /// went wrong).
    pub deepest_rollback: u32,
    /// Predicted rows confirmed by the server (one per row per confirmed tick).
    pub confirmations: u64,
    /// The lowest lead of the recent input acks: ticks early (negative: late) the server got
    /// this client's inputs, at the worst.
    pub input_lead: i32,
    /// Times the simulation clock jumped ahead because inputs arrived late.
    pub clock_jumps: u64,
    /// Ticks the clock skipped without simulating them: a frame simulates at most 16 ticks,
    /// and the clock goes on from the server's state past the rest (after a stall).
    pub ticks_skipped: u64,
    /// Ticks the determinism check found to differ (see
    /// [`Simulation::divergence`](crate::prediction::Simulation::divergence)).
    pub divergences: u64,
}

/// What the server knows about one client's inputs
/// ([`PeerNetworkStats::inputs`](crate::replication::PeerNetworkStats::inputs)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputStats {
    /// Ticks simulated with the client's own input for that tick.
    pub on_time: u64,
    /// Ticks simulated without it (lost beyond the redundancy, or late), with the
    /// [`MissingInput`](crate::prediction::MissingInput) policy's input instead.
    pub missing: u64,
    /// Inputs that arrived after their tick was simulated (counted once per tick).
    pub late: u64,
    /// Inputs dropped for being too far ahead of the server.
    pub dropped: u64,
    /// Inputs buffered ahead of the tick last simulated (the input buffer's depth).
    pub buffered: u32,
    /// Inputs simulated whose view (the render tick the client claims it showed, for lag
    /// compensation) was more than
    /// [`LagHistory::MAX_TICKS`](crate::prediction::LagHistory::MAX_TICKS) ticks behind the
    /// input's tick, or after it: [`Step::view_tick`](crate::prediction::Step::view_tick)
    /// gives the nearest tick of that window instead. An honest client never sends one.
    pub views_out_of_window: u64,
}

//! The client's half of the runtime: applying spawns and snapshots, interpolation, and
//! prediction (the simulation clock, the prediction state of each row and its rollback passes).

mod baselines;
pub(crate) mod bit_snapshot;
pub(crate) mod entry;
pub(crate) mod entry_batch;
mod floors;
pub(crate) mod interpolation;
pub(crate) mod named_by;
mod node_list;
pub(crate) mod prediction;
pub(crate) mod reparent;
pub(crate) mod replica_column;
pub(crate) mod replicas;
pub(crate) mod state;

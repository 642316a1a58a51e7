//! The client's half of the runtime.

pub(crate) mod predicted;
pub(crate) mod replica_column;
pub(crate) mod replicas;

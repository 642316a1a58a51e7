//! What the server's and the client's halves of the runtime both use, and neither owns: ids,
//! the protocol table and framing, the outbox, the state lent to both halves, events, stats,
//! configuration, and the runtime's per-type column table.

pub(crate) mod by_column;
pub(crate) mod columns;
pub(crate) mod config;
pub(crate) mod each_value;
pub(crate) mod events;
pub(crate) mod input_wire;
pub(crate) mod instance;
pub mod message_ids;
pub(crate) mod misconfiguration;
pub(crate) mod misuse;
pub(crate) mod net_id;
pub(crate) mod outbox;
pub(crate) mod prediction_config;
pub(crate) mod prediction_stats;
pub(crate) mod protocol;
pub(crate) mod rpc_signatures;
pub(crate) mod rpc_state;
pub(crate) mod sorted_ids;
pub(crate) mod spawners;
pub(crate) mod state;
pub(crate) mod stats;
pub(crate) mod subtree;
pub(crate) mod write_value;

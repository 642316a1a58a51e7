//! The server's half of the runtime: shadow states and capture, the node and group tables,
//! snapshots (entry cache, shared snapshots, per-client send state), interest, acknowledgements,
//! the handshake, kicks and flood limits, and the per-client input buffer.

pub(crate) mod alike;
pub(crate) mod asked;
pub(crate) mod bit_entries;
pub(crate) mod changed_marks;
pub(crate) mod client_list;
pub(crate) mod client_slot;
pub(crate) mod control_queue;
pub(crate) mod entry_cache;
pub(crate) mod flood;
pub(crate) mod group_vis;
pub(crate) mod handshake;
pub(crate) mod index_upkeep;
pub(crate) mod input_buffer;
pub(crate) mod interest;
pub(crate) mod interest_state;
pub(crate) mod kept_stand;
pub(crate) mod kick;
pub(crate) mod known;
pub(crate) mod net_ids;
pub(crate) mod node_states;
pub(crate) mod node_table;
pub(crate) mod per_slot;
pub(crate) mod region_pool;
pub(crate) mod reparent;
pub(crate) mod resend;
pub(crate) mod send_state;
pub(crate) mod shadow_column;
pub(crate) mod shadows;
pub(crate) mod shared_body;
pub(crate) mod shared_snapshot;
pub(crate) mod slot_records;
pub(crate) mod slot_table;
pub(crate) mod snapshot;
pub(crate) mod snapshot_bits;
pub(crate) mod spatial_index;
pub(crate) mod state;
#[cfg(test)]
pub(crate) mod test_support;
pub(crate) mod value_history;
pub(crate) mod viewers;
pub(crate) mod vis_table;
pub(crate) mod visibility;
pub(crate) mod withheld;

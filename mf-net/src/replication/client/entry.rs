//! A snapshot entry as a client applies it: when ([`EntryAt`]), which row and bytes
//! ([`EntryRef`]), and what a pass could not apply ([`EntryMisses`]).

use crate::store::NodeId;
use crate::wire::DecodeError;

/// When a client applies a snapshot entry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryAt {
    /// The snapshot's tick.
    pub(crate) tick: u32,
    /// The tick up to which every node is known still (the newest untruncated snapshot); a
    /// row's known tick is the newer of this and the last snapshot that carried it.
    pub(crate) known_floor: u32,
}

/// A snapshot entry a client applies in its column's pass: the row and node it is for (a
/// hint: the row is checked), the runtime's tag (the net id) and where its state's bytes are
/// in the snapshot.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryRef {
    pub(crate) row: u32,
    pub(crate) node: NodeId,
    pub(crate) tag: u32,
    pub(crate) start: u32,
    pub(crate) end: u32,
}

impl EntryRef {
    /// Its state's bytes in `snapshot` (none if the range is not in it).
    pub(crate) fn bytes<'a>(&self, snapshot: &'a [u8]) -> &'a [u8] {
        snapshot
            .get(self.start as usize..self.end as usize)
            .unwrap_or(&[])
    }
}

/// What a column's pass over entries could not apply: entries whose row was not their node's
/// (found again by the caller), and entries that did not read, with their error.
#[derive(Debug, Default)]
pub(crate) struct EntryMisses {
    pub(crate) stale: Vec<EntryRef>,
    pub(crate) rejected: Vec<(u32, DecodeError)>,
}

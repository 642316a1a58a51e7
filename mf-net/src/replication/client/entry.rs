//! A snapshot entry as a client applies it: when ([`EntryAt`]), which row and bytes
//! ([`EntryRef`]), and what a pass could not apply ([`EntryMisses`]).

use crate::refs;
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
/// (found again by the caller), entries that did not read, with their error; and, of entries
/// of types with node references, the net ids each named (tag, net id named) and how many held
/// a member back (it named a node this client does not have yet).
#[derive(Debug, Default)]
pub(crate) struct EntryMisses {
    pub(crate) stale: Vec<EntryRef>,
    pub(crate) rejected: Vec<(u32, DecodeError)>,
    pub(crate) named: Vec<(u32, u32)>,
    pub(crate) held: u64,
}

impl EntryMisses {
    /// Takes what the references of the entry tagged `tag`, just read, named.
    pub(crate) fn take_named(&mut self, tag: u32) {
        let named = &mut self.named;
        if refs::take_named(|target| named.push((tag, target))) {
            self.held += 1;
        }
    }
}

//! [`ClientList`]: the server's connected clients, in a list (read as a slice), found by peer
//! in a sorted index: each message a client sends is handed to its slot without a walk over
//! every client's (with a few hundred clients, such walks, one per ack, input and RPC, cost
//! the server a cold line per client passed).

use std::ops::{Deref, DerefMut};

use crate::replication::server::client_slot::ClientSlot;
use crate::transport::PeerId;

/// The connected clients (see the [module documentation](self)). Slots are added at the end
/// and removed by moving the last one into the gap, as a `Vec`'s `swap_remove` does.
#[derive(Default)]
pub(crate) struct ClientList {
    slots: Vec<ClientSlot>,
    /// Each slot's peer and index, by peer.
    by_peer: Vec<(PeerId, u32)>,
}

impl ClientList {
    /// The index of `peer`'s slot, if it has one.
    #[inline]
    pub(crate) fn index_of(&self, peer: PeerId) -> Option<usize> {
        let at = self.by_peer.binary_search_by_key(&peer, |e| e.0).ok()?;
        let index = self.by_peer[at].1 as usize;
        debug_assert_eq!(self.slots[index].peer, peer, "the index follows the slots");
        Some(index)
    }

    /// The index of `peer`'s slot, if it has one and has joined.
    #[inline]
    pub(crate) fn ready_index_of(&self, peer: PeerId) -> Option<usize> {
        self.index_of(peer).filter(|&c| self.slots[c].ready)
    }

    /// `peer`'s slot, if it has one.
    #[inline]
    pub(crate) fn of_mut(&mut self, peer: PeerId) -> Option<&mut ClientSlot> {
        let c = self.index_of(peer)?;
        Some(&mut self.slots[c])
    }

    /// Adds `slot` at the end (its peer has no slot yet).
    pub(crate) fn push(&mut self, slot: ClientSlot) {
        let peer = slot.peer;
        let index = u32::try_from(self.slots.len()).expect("fewer than 2³² clients");
        match self.by_peer.binary_search_by_key(&peer, |e| e.0) {
            Ok(_) => debug_assert!(false, "a peer has one slot"),
            Err(at) => self.by_peer.insert(at, (peer, index)),
        }
        self.slots.push(slot);
    }

    /// Removes the slot at `index`, the last slot taking its place.
    pub(crate) fn swap_remove(&mut self, index: usize) -> ClientSlot {
        let last = self.slots.len() - 1;
        if let Ok(at) = self
            .by_peer
            .binary_search_by_key(&self.slots[index].peer, |e| e.0)
        {
            self.by_peer.remove(at);
        }
        if index != last {
            let moved = self.slots[last].peer;
            if let Ok(at) = self.by_peer.binary_search_by_key(&moved, |e| e.0) {
                self.by_peer[at].1 = u32::try_from(index).unwrap_or(u32::MAX);
            }
        }
        self.slots.swap_remove(index)
    }
}

impl Deref for ClientList {
    type Target = [ClientSlot];

    fn deref(&self) -> &[ClientSlot] {
        &self.slots
    }
}

impl DerefMut for ClientList {
    fn deref_mut(&mut self) -> &mut [ClientSlot] {
        &mut self.slots
    }
}

impl<'a> IntoIterator for &'a ClientList {
    type Item = &'a ClientSlot;
    type IntoIter = std::slice::Iter<'a, ClientSlot>;

    fn into_iter(self) -> Self::IntoIter {
        self.slots.iter()
    }
}

impl<'a> IntoIterator for &'a mut ClientList {
    type Item = &'a mut ClientSlot;
    type IntoIter = std::slice::IterMut<'a, ClientSlot>;

    fn into_iter(self) -> Self::IntoIter {
        self.slots.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn list(peers: &[u64]) -> ClientList {
        let mut list = ClientList::default();
        for &p in peers {
            list.push(ClientSlot::new(
                PeerId(p),
                Duration::ZERO,
                crate::replication::shared::protocol::MIN_SNAPSHOT_MEMORY,
            ));
        }
        list
    }

    fn check(list: &ClientList) {
        for (i, slot) in list.iter().enumerate() {
            assert_eq!(list.index_of(slot.peer), Some(i));
        }
        assert_eq!(list.by_peer.len(), list.len());
    }

    #[test]
    fn each_peer_is_found_at_its_slot_as_slots_come_and_go() {
        let mut list = list(&[9, 3, 7, 1]);
        check(&list);
        assert_eq!(list.index_of(PeerId(5)), None);
        // The last slot moves into the gap.
        assert_eq!(list.swap_remove(1).peer, PeerId(3));
        assert_eq!(list.index_of(PeerId(1)), Some(1));
        assert_eq!(list.index_of(PeerId(3)), None);
        check(&list);
        // The last slot itself.
        assert_eq!(list.swap_remove(2).peer, PeerId(7));
        check(&list);
        list.push(ClientSlot::new(
            PeerId(4),
            Duration::ZERO,
            crate::replication::shared::protocol::MIN_SNAPSHOT_MEMORY,
        ));
        check(&list);
        assert_eq!(list.index_of(PeerId(4)), Some(2));
        assert_eq!(list.ready_index_of(PeerId(4)), None, "not joined");
        list[2].ready = true;
        assert_eq!(list.ready_index_of(PeerId(4)), Some(2));
        while !list.is_empty() {
            list.swap_remove(0);
            check(&list);
        }
    }
}

//! Test doubles for the server's unit tests: a hand-made [`ErasedState`] and node records.

use std::any::{Any, TypeId};

use super::node_table::{GroupKey, NetNode};
use super::slot_table::Key;
use crate::replication::erased::ErasedState;
use crate::replication::Audience;
use crate::scene::Scene;
use crate::transport::PeerId;
use crate::wire::NetWriter;

/// A shadow state of a few members, each a tick stamp and some bytes; member 0 is
/// `owner_only` and member 1 `skip_owner` when `conditional`. Written like a derived state: a
/// varint mask of the members stamped after `since` that the audience receives, then their
/// bytes.
pub(crate) struct FakeState {
    pub(crate) members: Vec<(u32, Vec<u8>)>,
    pub(crate) conditional: bool,
}

impl FakeState {
    /// Members stamped `ticks`, member *i* holding `len` bytes of value *i*.
    pub(crate) fn new(ticks: &[u32], len: usize, conditional: bool) -> Self {
        let members = (0u8..)
            .zip(ticks)
            .map(|(i, &tick)| (tick, vec![i; len]))
            .collect();
        Self {
            members,
            conditional,
        }
    }

    fn excluded(&self, member: usize, audience: Audience) -> bool {
        self.conditional
            && matches!(
                (member, audience),
                (0, Audience::NonOwner) | (1, Audience::Owner)
            )
    }

    fn mask(&self, since: Option<u32>, audience: Audience) -> u64 {
        let mut mask = 0;
        for (i, (tick, _)) in self.members.iter().enumerate() {
            if since.map_or(true, |since| *tick > since) && !self.excluded(i, audience) {
                mask |= 1 << i;
            }
        }
        mask
    }
}

impl ErasedState for FakeState {
    fn capture(&mut self, _: &dyn Any, _: u32) -> bool {
        false
    }

    fn last_changed(&self) -> u32 {
        self.members.iter().map(|m| m.0).max().unwrap_or(0)
    }

    fn write_since(&self, since: u32, w: &mut NetWriter) {
        self.write_since_for(Some(since), Audience::All, w);
    }

    fn write_full(&self, w: &mut NetWriter) {
        self.write_since_for(None, Audience::All, w);
    }

    fn last_changed_for(&self, audience: Audience) -> u32 {
        (0..self.members.len())
            .filter(|&i| !self.excluded(i, audience))
            .map(|i| self.members[i].0)
            .max()
            .unwrap_or(0)
    }

    fn write_since_for(&self, since: Option<u32>, audience: Audience, w: &mut NetWriter) {
        let mask = self.mask(since, audience);
        w.write_var_u64(mask);
        for (i, (_, bytes)) in self.members.iter().enumerate() {
            if mask & (1 << i) != 0 {
                w.write_bytes(bytes);
            }
        }
    }

    fn write_full_for(&self, audience: Audience, w: &mut NetWriter) {
        self.write_since_for(None, audience, w);
    }

    fn owner_conditions(&self) -> bool {
        self.conditional
    }

    fn value_type(&self) -> TypeId {
        TypeId::of::<()>()
    }
}

/// A node record with `state` (its change ticks taken from it), owned by `authority`.
pub(crate) fn node(net_id: u32, state: Option<FakeState>, authority: PeerId) -> NetNode {
    let last_changed = state.as_ref().map_or([0; 2], |s| {
        [
            s.last_changed_for(Audience::Owner),
            s.last_changed_for(Audience::NonOwner),
        ]
    });
    NetNode {
        net_id,
        node: Scene::new().root(),
        state: state.map(|s| Box::new(s) as Box<dyn ErasedState>),
        last_changed,
        authority,
        net_parent: 0,
        group: GROUP,
    }
}

/// The group key test nodes name (no group table holds it).
pub(crate) const GROUP: GroupKey = Key::new(0, 1);

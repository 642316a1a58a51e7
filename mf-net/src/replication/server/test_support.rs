//! Test doubles for the server's unit tests: node records with hand-made change ticks.

use std::collections::HashMap;

use crate::replication::server::node_states::NodeStates;
use crate::replication::server::node_table::{GroupKey, NetNode};
use crate::replication::server::shadow_column::{
    change_gap, LastChanged, StateRequest, StateWritten,
};
use crate::replication::server::slot_table::Key;
use crate::replication::shared::columns::ValueAt;
use crate::replication::Audience;
use crate::scene::Scene;
use crate::transport::PeerId;
use crate::wire::NetWriter;

/// A shadow state of a few members, each a tick stamp and some bytes; member 0 is
/// `owner_only` and member 1 `skip_owner` when `conditional`. Written like a derived state: a
/// varint mask of the members stamped after `since` that the audience receives, then their
/// bytes.
pub(crate) struct FakeState {
    pub(crate) ticks: Vec<u32>,
    pub(crate) values: Vec<Vec<u8>>,
    pub(crate) conditional: bool,
}

impl FakeState {
    /// Members stamped `ticks`, member *i* holding `len` bytes of value *i*.
    pub(crate) fn new(ticks: &[u32], len: usize, conditional: bool) -> Self {
        Self {
            ticks: ticks.to_vec(),
            values: (0u8..).take(ticks.len()).map(|i| vec![i; len]).collect(),
            conditional,
        }
    }

    /// The state as a snapshot entry carries it (see the type's documentation).
    pub(crate) fn write_since_for(
        &self,
        since: Option<u32>,
        audience: Audience,
        w: &mut NetWriter,
    ) {
        let mut mask = 0u64;
        for (i, tick) in self.ticks.iter().enumerate() {
            if since.map_or(true, |since| crate::tick::tick_after(*tick, since))
                && !self.excluded(i, audience)
            {
                mask |= 1 << i;
            }
        }
        w.write_var_u64(mask);
        for (i, bytes) in self.values.iter().enumerate() {
            if mask & (1 << i) != 0 {
                w.write_bytes(bytes);
            }
        }
    }

    fn excluded(&self, member: usize, audience: Audience) -> bool {
        self.conditional
            && matches!(
                (member, audience),
                (0, Audience::NonOwner) | (1, Audience::Owner)
            )
    }

    /// The newest tick of a member `audience` receives (0: none).
    fn last_changed_for(&self, audience: Audience) -> u32 {
        (0..self.ticks.len())
            .filter(|&i| !self.excluded(i, audience))
            .map(|i| self.ticks[i])
            .max()
            .unwrap_or(0)
    }
}

impl FakeState {
    /// The newest tick before `limit` of a member `audience` receives.
    fn changed_before(&self, limit: u32, audience: Audience) -> Option<u32> {
        (0..self.ticks.len())
            .filter(|&i| !self.excluded(i, audience))
            .fold(None, |newest, i| {
                crate::tick::newest_before(newest, Some(self.ticks[i]), limit)
            })
    }
}

/// A node record with `state`'s change ticks, owned by `authority`.
pub(crate) fn node(net_id: u32, state: Option<FakeState>, authority: PeerId) -> NetNode {
    let last_changed = state.as_ref().map_or(LastChanged::default(), |s| {
        let audiences = [Audience::Owner, Audience::NonOwner];
        let last = audiences.map(|a| s.last_changed_for(a));
        LastChanged {
            last,
            gap: [0, 1].map(|i| change_gap(last[i], s.changed_before(last[i], audiences[i]))),
        }
    });
    NetNode {
        net_id,
        node: Scene::new().root(),
        owner_conditions: state.as_ref().is_some_and(|s| s.conditional),
        ty: u16::from(state.is_some()),
        last_changed,
        value_at: ValueAt::default(),
        authority,
        net_parent: 0,
        group: GROUP,
        over_limit: Default::default(),
    }
}

/// The group key test nodes name (no group table holds it).
pub(crate) const GROUP: GroupKey = Key::new(0, 1);

/// The states of the test nodes, by net id.
#[derive(Default)]
pub(crate) struct FakeStates(pub(crate) HashMap<u32, FakeState>);

impl NodeStates for FakeStates {
    fn write_since_for(
        &self,
        node: &NetNode,
        since: Option<u32>,
        audience: Audience,
        w: &mut NetWriter,
    ) {
        if let Some(state) = self.0.get(&node.net_id) {
            state.write_since_for(since, audience, w);
        }
    }

    /// Its states' layout is empty: the bit form of every state is no bits.
    fn write_bits_since_for(
        &self,
        node: &NetNode,
        _which: (Option<u32>, Audience),
        base: &[crate::codec::quantize::Buckets],
        coding: &mut crate::codec::state_coder::Coding,
    ) -> Option<bool> {
        let _ = self.0.get(&node.net_id)?;
        let empty = &crate::codec::state_bits::StateLayout::EMPTY;
        Some(coding.code_after(empty, base, |coder| coder.mask(0, 0)))
    }

    /// Its states have no `initial_only` members: the whole state is the resync's.
    fn write_full_for(&self, node: &NetNode, audience: Audience, w: &mut NetWriter) {
        self.write_since_for(node, None, audience, w);
    }

    /// As [`write_bits_since_for`](Self::write_bits_since_for): no bits.
    fn write_bits_full_for(
        &self,
        node: &NetNode,
        _audience: Audience,
        _scratch: &mut NetWriter,
        _coding: &mut crate::codec::state_coder::Coding,
    ) -> Option<bool> {
        self.0.get(&node.net_id).map(|_| true)
    }

    fn write_states(
        &self,
        _column: u32,
        requests: &[StateRequest],
        w: &mut NetWriter,
        scratch: &mut NetWriter,
        written: &mut Vec<StateWritten>,
    ) {
        for r in requests {
            let Some(state) = self.0.get(&r.tag) else {
                written.push(StateWritten::Stale);
                continue;
            };
            w.write_tagged(r.tag, scratch, |w| {
                state.write_since_for(r.since, r.audience, w);
            });
            let end = u32::try_from(w.len()).unwrap();
            written.push(StateWritten::Entry { end });
        }
    }

    fn column_count(&self) -> usize {
        1
    }
}

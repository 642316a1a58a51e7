//! [`NodeStates`]: where the server's snapshot writers read the nodes' states (the shadow
//! states, or a test double).

use crate::codec::quantize::Buckets;
use crate::codec::state_coder::Coding;
use crate::replication::server::node_table::NetNode;
use crate::replication::server::shadow_column::{StateRequest, StateWritten};
use crate::replication::server::shadows::Shadows;
use crate::replication::Audience;
use crate::wire::NetWriter;

/// Where a snapshot reads its nodes' states: the shadow states (see [`Shadows`]' implementation),
/// or a test double.
pub(crate) trait NodeStates {
    /// Appends `node`'s state as a snapshot entry carries it: the members changed after
    /// `since` (all when `None`) that `audience` receives.
    fn write_since_for(
        &self,
        node: &NetNode,
        since: Option<u32>,
        audience: Audience,
        w: &mut NetWriter,
    );

    /// Codes the state [`write_since_for`](Self::write_since_for) appends in its bit form
    /// against `base` into `coding`, its bits after those the coding holds: whether it can be
    /// sent (no member over a limit); `None` if the node has no state.
    fn write_bits_since_for(
        &self,
        node: &NetNode,
        which: (Option<u32>, Audience),
        base: &[Buckets],
        coding: &mut Coding,
    ) -> Option<bool>;

    /// Appends `node`'s whole state as a resync the client asked for carries it: every member
    /// `audience` receives, `initial_only` ones included, as the server holds them now (the
    /// state a spawn carries: [`Capture::write_full_for`](crate::replicated::Capture::write_full_for)).
    fn write_full_for(&self, node: &NetNode, audience: Audience, w: &mut NetWriter);

    /// Codes the state [`write_full_for`](Self::write_full_for) appends in its bit form from
    /// zero (no baseline) into `coding`, its bits after those the coding holds (its values
    /// are left as they were), with `scratch` for the byte form: whether it can be sent;
    /// `None` if the node has no state.
    fn write_bits_full_for(
        &self,
        node: &NetNode,
        audience: Audience,
        scratch: &mut NetWriter,
        coding: &mut Coding,
    ) -> Option<bool>;

    /// Appends the snapshot entries `requests`, all of rows of column `column`, to `w` in one
    /// pass, and what came of each to `written` (see [`Shadows::write_states`]).
    fn write_states(
        &self,
        column: u32,
        requests: &[StateRequest],
        w: &mut NetWriter,
        scratch: &mut NetWriter,
        written: &mut Vec<StateWritten>,
    );

    /// How many columns there are.
    fn column_count(&self) -> usize;
}

impl NodeStates for Shadows {
    #[inline]
    fn write_since_for(
        &self,
        node: &NetNode,
        since: Option<u32>,
        audience: Audience,
        w: &mut NetWriter,
    ) {
        Shadows::write_since_for(self, node.value_at, node.node, since, audience, w);
    }

    #[inline]
    fn write_bits_since_for(
        &self,
        node: &NetNode,
        which: (Option<u32>, Audience),
        base: &[Buckets],
        coding: &mut Coding,
    ) -> Option<bool> {
        let at = (node.value_at, node.node);
        Shadows::write_bits_since_for(self, at, which, base, coding)
    }

    fn write_full_for(&self, node: &NetNode, audience: Audience, w: &mut NetWriter) {
        Shadows::write_full_for(self, node.node, audience, w);
    }

    fn write_bits_full_for(
        &self,
        node: &NetNode,
        audience: Audience,
        scratch: &mut NetWriter,
        coding: &mut Coding,
    ) -> Option<bool> {
        Shadows::write_bits_full_for(self, node.node, audience, scratch, coding)
    }

    #[inline]
    fn write_states(
        &self,
        column: u32,
        requests: &[StateRequest],
        w: &mut NetWriter,
        scratch: &mut NetWriter,
        written: &mut Vec<StateWritten>,
    ) {
        Shadows::write_states(self, column, requests, w, scratch, written);
    }

    fn column_count(&self) -> usize {
        Shadows::column_count(self)
    }
}

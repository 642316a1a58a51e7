//! The public API of interest management on [`Multiplayer`]: policies, manual relevance and
//! focus. The evaluation is the server's (`server/interest.rs`).

use crate::replication::interest::InterestPolicy;
use crate::replication::multiplayer::role::Role;
use crate::replication::multiplayer::Multiplayer;
use crate::replication::server::state::ServerState;
use crate::replication::shared::config::MultiplayerError;
use crate::scene::NodeId;
use crate::transport::{PeerId, Transport};

impl<T: Transport + 'static, S: crate::store::Store> Multiplayer<T, S> {
    fn interest_server(&mut self) -> Result<&mut ServerState, MultiplayerError> {
        match &mut self.core.role {
            Role::Server(server) => Ok(server),
            Role::Client(_) => Err(MultiplayerError::NotServer),
        }
    }

    /// Uses `policy` to decide which groups each client gets (server or offline), from the end
    /// of this frame: each client is evaluated every `every_ticks` network ticks (0 reads as
    /// 1), on a turn of its own (clients' turns spread over the ticks), and for each new spawn. See
    /// [`interest`](crate::replication::interest) for the precedence of owned nodes, manual
    /// settings and the policy.
    ///
    /// # Errors
    ///
    /// [`NotServer`](MultiplayerError::NotServer).
    pub fn set_interest_policy(
        &mut self,
        policy: impl InterestPolicy + 'static,
        every_ticks: u32,
    ) -> Result<(), MultiplayerError> {
        let server = self.interest_server()?;
        server.interest.policy = Some(Box::new(policy));
        server.interest.every = every_ticks.max(1);
        server.interest.all_due = true;
        Ok(())
    }

    /// Removes the policy: groups without a manual setting become relevant to everyone.
    pub fn clear_interest_policy(&mut self) {
        if let Ok(server) = self.interest_server() {
            server.interest.policy = None;
            server.interest.all_due = true;
        }
    }

    /// Makes the spawn group of the networked `node` (its instance or bound group; the whole
    /// group, whichever of its nodes is named; for a group beside its parent, see
    /// [`Store::beside_parent`](crate::store::Store::beside_parent), the parent's) relevant or
    /// not to the joined client `peer`, over the policy, from the end of this frame (no grace).
    /// A group with a node `peer` has authority over stays relevant to it regardless.
    ///
    /// # Errors
    ///
    /// [`NotServer`](MultiplayerError::NotServer),
    /// [`NotNetworked`](MultiplayerError::NotNetworked),
    /// [`UnknownPeer`](MultiplayerError::UnknownPeer) (not a joined client).
    pub fn set_relevant(
        &mut self,
        node: NodeId,
        peer: PeerId,
        relevant: bool,
    ) -> Result<(), MultiplayerError> {
        self.set_manual(node, peer, Some(relevant))
    }

    /// Removes `set_relevant`'s setting for the group of `node` and `peer`: the policy (or the
    /// default, relevant) decides again.
    ///
    /// # Errors
    ///
    /// As [`set_relevant`](Self::set_relevant).
    pub fn clear_relevant(&mut self, node: NodeId, peer: PeerId) -> Result<(), MultiplayerError> {
        self.set_manual(node, peer, None)
    }

    /// Server: the [`set_relevant`](Self::set_relevant) setting for the group of the networked
    /// `node` (flushed or spawned this frame) and the client `peer`, if one is set.
    pub fn relevance_set(&self, node: NodeId, peer: PeerId) -> Option<bool> {
        let Role::Server(server) = &self.core.role else {
            return None;
        };
        let first = server.group_first_of_node(node)?;
        server.interest.manual.get(&(first, peer)).copied()
    }

    fn set_manual(
        &mut self,
        node: NodeId,
        peer: PeerId,
        relevant: Option<bool>,
    ) -> Result<(), MultiplayerError> {
        let server = self.interest_server()?;
        let first = server
            .group_first_of_node(node)
            .ok_or(MultiplayerError::NotNetworked(node))?;
        if !server.joined.contains(&peer) {
            return Err(MultiplayerError::UnknownPeer(peer));
        }
        match relevant {
            Some(relevant) => server.interest.manual.insert((first, peer), relevant),
            None => server.interest.manual.remove(&(first, peer)),
        };
        server.interest.manual_due.push((first, peer));
        Ok(())
    }

    /// Sets the joined client `peer`'s focus node (usually its player), which policies such as
    /// [`GridInterest`](crate::replication::interest::GridInterest) measure from; `None` clears
    /// it. Applied at the end of the frame (an evaluation of every group that may be relevant
    /// to it).
    ///
    /// # Errors
    ///
    /// [`NotServer`](MultiplayerError::NotServer),
    /// [`UnknownPeer`](MultiplayerError::UnknownPeer).
    pub fn set_focus(
        &mut self,
        peer: PeerId,
        node: Option<NodeId>,
    ) -> Result<(), MultiplayerError> {
        let server = self.interest_server()?;
        let c = server
            .clients
            .ready_index_of(peer)
            .ok_or(MultiplayerError::UnknownPeer(peer))?;
        let slot = &mut server.clients[c];
        slot.focus = node;
        slot.whole_due = true;
        Ok(())
    }

    /// Server: asks the interest policy again, at the end of this frame, about every group
    /// that may be relevant to each client: for a policy with cells
    /// ([`reach_cells`](crate::replication::interest::InterestPolicy::reach_cells)) whose
    /// answers changed for a reason other than a cell (a team changed, say). Costs one whole
    /// evaluation per client.
    pub fn refresh_interest(&mut self) {
        if let Ok(server) = self.interest_server() {
            for client in &mut server.clients {
                client.whole_due = true;
            }
        }
    }

    /// Server: whether the client `peer` currently has the group of the networked `node` and
    /// receives its changes.
    pub fn is_relevant(&self, node: NodeId, peer: PeerId) -> bool {
        let Role::Server(server) = &self.core.role else {
            return false;
        };
        let Some(c) = server.clients.ready_index_of(peer) else {
            return false;
        };
        server
            .by_node
            .get(node)
            .is_some_and(|id| server.group_of(id).is_some() && server.sees(c, id))
    }
}

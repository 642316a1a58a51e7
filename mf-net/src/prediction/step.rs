//! [`Step`]: what a game's step function sees of one tick, on the server or a client.

use std::fmt;

use crate::replication::client::state::ClientState;
use crate::replication::server::state::ServerState;
use crate::replication::Replicated;
use std::any::Any;

use crate::scene::{NodeId, Scene};
use crate::store::{lend, Store};
use crate::transport::PeerId;

/// One peer's input for the tick a step simulates.
#[derive(Debug, Clone)]
pub(super) struct PeerInput<I> {
    pub(super) peer: PeerId,
    pub(super) input: I,
    /// The render tick the peer showed remote nodes at when it sampled the input.
    pub(super) view: Option<f64>,
}

/// Who owns the nodes, as the side running the step sees it.
#[derive(Clone, Copy)]
pub(super) enum Owners<'a> {
    Server(&'a ServerState),
    Client(&'a ClientState),
}

impl Owners<'_> {
    #[inline]
    fn of(self, node: NodeId) -> Option<PeerId> {
        match self {
            Self::Server(server) => server.authority_of(node),
            Self::Client(client) => client.authority_of(node),
        }
    }

    /// Calls `f` with every networked node this side simulates: every one on the server, the
    /// predicted ones on a client.
    fn each_simulated(self, f: &mut dyn FnMut(NodeId)) {
        match self {
            Self::Server(server) => server.nodes.values().for_each(|n| f(n.node)),
            Self::Client(client) => client.replicas.each_predicted(f),
        }
    }

    /// Whether this side predicts `node` (a client; the server simulates every node).
    #[inline]
    fn predicts(self, node: NodeId) -> bool {
        match self {
            Self::Server(_) => true,
            Self::Client(client) => client.replicas.is_predicted(node),
        }
    }
}

/// What a game's step function sees of one tick: the scene, the tick, and every input of it
/// (on the server, each client's that sends input and its own; on a client, its own).
///
/// A step advances the whole world, not one node: use
/// [`simulated_mut`](Self::simulated_mut) to walk the nodes this side simulates (the server:
/// all of them; a client: the ones it predicts), and [`scene`](Self::scene) to look at the
/// rest (obstacles, other players).
pub struct Step<'a, I> {
    pub(super) scene: &'a mut dyn Store,
    pub(super) tick: u32,
    pub(super) resimulating: bool,
    /// By peer, each once.
    pub(super) inputs: &'a [PeerInput<I>],
    pub(super) owners: Owners<'a>,
    pub(super) server: bool,
}

impl<I> fmt::Debug for Step<'_, I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Step")
            .field("tick", &self.tick)
            .field("resimulating", &self.resimulating)
            .field("inputs", &self.inputs.len())
            .finish_non_exhaustive()
    }
}

impl<'a, I> Step<'a, I> {
    /// The tick being simulated (the server's tick numbering, on both ends).
    pub fn tick(&self) -> u32 {
        self.tick
    }

    /// Whether this run re-simulates a tick after a rollback (or for the determinism check):
    /// play no sounds, spawn no effects.
    pub fn is_resimulation(&self) -> bool {
        self.resimulating
    }

    /// Whether this is the server (authoritative) side.
    pub fn is_server(&self) -> bool {
        self.server
    }

    /// The scene.
    ///
    /// # Panics
    ///
    /// If the storage is not the built-in scene (see [`store`](Self::store)).
    pub fn scene(&self) -> &Scene {
        self.store()
    }

    /// The scene, mutably. On a client, only predicted nodes keep what the step writes; the
    /// next snapshot or blend overwrites the others.
    ///
    /// # Panics
    ///
    /// If the storage is not the built-in scene (see [`store_mut`](Self::store_mut)).
    pub fn scene_mut(&mut self) -> &mut Scene {
        self.store_mut()
    }

    /// The storage, as the `S` the [`Multiplayer`](crate::replication::Multiplayer) was made
    /// with ([`Scene`] unless [`with_store`](crate::replication::Multiplayer::with_store)).
    ///
    /// # Panics
    ///
    /// If the storage is not an `S`.
    pub fn store<S: Store>(&self) -> &S {
        let store: &dyn Any = &*self.scene;
        store
            .downcast_ref()
            .expect("`Step::store::<S>`: the multiplayer's storage is not an `S`")
    }

    /// The storage, mutably (see [`store`](Self::store) and [`scene_mut`](Self::scene_mut)).
    ///
    /// # Panics
    ///
    /// If the storage is not an `S`.
    pub fn store_mut<S: Store>(&mut self) -> &mut S {
        let store: &mut dyn Any = &mut *self.scene;
        store
            .downcast_mut()
            .expect("`Step::store_mut::<S>`: the multiplayer's storage is not an `S`")
    }

    /// `peer`'s input for this tick (on the server, the [`MissingInput`](super::MissingInput)
    /// policy's when it did not arrive), or `None` if it sends none.
    pub fn input(&self, peer: PeerId) -> Option<&I> {
        find_input(self.inputs, peer).map(|p| &p.input)
    }

    /// Every input of this tick, in peer id order.
    pub fn inputs(&self) -> impl Iterator<Item = (PeerId, &I)> + '_ {
        self.inputs.iter().map(|p| (p.peer, &p.input))
    }

    /// The input of `node`'s authority for this tick (see [`input`](Self::input)).
    pub fn input_of(&self, node: NodeId) -> Option<&I> {
        self.input(self.owners.of(node)?)
    }

    /// Server: the render tick `peer` was showing remote nodes at when it sampled this tick's
    /// input, for lag compensation (see [`LagHistory`](super::LagHistory)); `None` if it did
    /// not say (it does not interpolate) or sent no input for this tick.
    ///
    /// What a client claims is kept within what a `LagHistory` can serve: at most this tick,
    /// at least [`LagHistory::MAX_TICKS`](super::LagHistory::MAX_TICKS) ticks before it. A
    /// claim outside is given as the nearest tick of that window and counted
    /// ([`InputStats::views_out_of_window`](super::InputStats::views_out_of_window)).
    pub fn view_tick(&self, peer: PeerId) -> Option<f64> {
        find_input(self.inputs, peer).and_then(|p| p.view)
    }

    /// The nodes holding a `T` this side simulates, with their values and their authority's
    /// input for this tick: every one on the server, the predicted ones on a client.
    ///
    /// # Panics
    ///
    /// If the storage is not the built-in scene: use
    /// [`each_simulated`](Self::each_simulated), which takes any storage.
    pub fn simulated_mut<T: Replicated>(
        &mut self,
    ) -> impl Iterator<Item = (NodeId, &mut T, Option<&I>)> + '_ {
        let (inputs, owners, server) = (self.inputs, self.owners, self.server);
        let scene: &mut Scene = (&mut *self.scene as &mut dyn Any)
            .downcast_mut()
            .expect("`Step::simulated_mut` walks the scene: use `each_simulated` over a store");
        scene
            .iter_mut::<T>()
            .map(|(handle, value)| (handle.node(), value))
            .filter(move |&(node, _)| server || owners.predicts(node))
            .map(move |(node, value)| {
                let input = match owners {
                    // A client predicts only the nodes it owns: its own input, no lookup.
                    Owners::Client(_) => inputs.first(),
                    Owners::Server(_) => owners.of(node).and_then(|peer| find_input(inputs, peer)),
                };
                (node, value, input.map(|p| &p.input))
            })
    }

    /// Calls `f` with every networked node holding a `T` this side simulates (every one on
    /// the server, the predicted ones on a client), its value and its authority's input for
    /// this tick, in any storage: one lend of the `T`s for the whole walk.
    pub fn each_simulated<T: Replicated>(&mut self, mut f: impl FnMut(NodeId, &mut T, Option<&I>)) {
        let (inputs, owners) = (self.inputs, self.owners);
        lend::<T>(self.scene, &mut |rows| {
            owners.each_simulated(&mut |node| {
                if let Some(value) = rows.get_mut(node) {
                    let input = owners.of(node).and_then(|peer| find_input(inputs, peer));
                    f(node, value, input.map(|p| &p.input));
                }
            });
        });
    }
}

/// `peer`'s input in `inputs` (sorted by peer), if it has one: a search, not a walk, since a
/// server's step looks up the input of every node it simulates among every client's.
#[inline]
fn find_input<I>(inputs: &[PeerInput<I>], peer: PeerId) -> Option<&PeerInput<I>> {
    let at = inputs.binary_search_by_key(&peer, |p| p.peer).ok()?;
    Some(&inputs[at])
}

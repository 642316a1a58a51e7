//! [`Net`]: the app's [`NetMultiplayer`], kept as a non-send resource, and
//! [`NetWorldExt::net`], which runs it with the app's world lent as its storage.

use bevy_ecs::world::World;

use crate::store::NetMultiplayer;
use crate::world_changes;

/// The app's [`NetMultiplayer`], as the plugin keeps it (a non-send resource). Reach it with
/// [`NetWorldExt::net`].
pub struct Net {
    pub(crate) mp: NetMultiplayer,
}

/// Running the app's replication from an exclusive system, a test or a startup closure.
pub trait NetWorldExt {
    /// Runs `f` on the app's [`NetMultiplayer`] with this world lent as its storage: inside
    /// `f`, `mp.store_mut().world_mut()` is this world, and every call of the core that reads
    /// or writes values (RPC senders, `replicate`, `despawn`, `start_server`) sees its
    /// entities. A node is an entity ([`entity_node`](crate::entity_node)) or one of its
    /// replicated components
    /// ([`ReplicatedComponents::node_of`](crate::ReplicatedComponents::node_of));
    /// [`entity_of`](crate::entity_of) gives the entity of either. On the server, what the
    /// world changed since the adapter last looked is taken first (networked entities given
    /// another parent move), so that `f` finds the network as the world is: a
    /// recursive `set_authority` reaches the entities under the one named now, not those the
    /// last frame left there.
    ///
    /// # Panics
    ///
    /// If [`MfNetPlugin`](crate::MfNetPlugin) was not added.
    fn net<R>(&mut self, f: impl FnOnce(&mut NetMultiplayer) -> R) -> R;
}

/// Puts the world and the resource back where they were, even if `f` panics.
struct Lent<'w> {
    world: &'w mut World,
    net: Option<Net>,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(mut net) = self.net.take() {
            std::mem::swap(self.world, net.mp.store_mut().world_mut());
            self.world.insert_non_send(net);
        }
    }
}

impl NetWorldExt for World {
    fn net<R>(&mut self, f: impl FnOnce(&mut NetMultiplayer) -> R) -> R {
        let mut net = self
            .remove_non_send::<Net>()
            .expect("MfNetPlugin is added to the app");
        std::mem::swap(self, net.mp.store_mut().world_mut());
        let mut lent = Lent {
            world: self,
            net: Some(net),
        };
        let mp = &mut lent.net.as_mut().expect("lent until dropped").mp;
        if mp.is_server() {
            world_changes::take(mp);
        }
        f(mp)
    }
}

//! Typed handles from [`Multiplayer`]: a spawn that returns the root's [`NetRef`], and
//! iteration over handles that does not borrow the instance, so that game code can call RPCs
//! (`mp.rpc(handle)`) or write fields while it walks them.

use smallvec::SmallVec;

use crate::replication::multiplayer::Multiplayer;
use crate::replication::shared::config::MultiplayerError;
use crate::replication::Replicated;
use crate::scene::{NetRef, NodeId, SceneIndex};
use crate::transport::{PeerId, Transport};

/// Handles collected without allocating up to this many (more spill to the heap).
const INLINE_HANDLES: usize = 16;

/// Handles copied out of the scene: an iterator that owns them, so it holds no borrow of the
/// [`Multiplayer`] it came from. Up to 16 handles are held without allocating.
#[derive(Debug)]
pub struct Handles<T>(smallvec::IntoIter<[NetRef<T>; INLINE_HANDLES]>);

impl<T> Iterator for Handles<T> {
    type Item = NetRef<T>;

    fn next(&mut self) -> Option<NetRef<T>> {
        self.0.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<T> ExactSizeIterator for Handles<T> {}

impl<T> DoubleEndedIterator for Handles<T> {
    fn next_back(&mut self) -> Option<NetRef<T>> {
        self.0.next_back()
    }
}

/// Collects `handles` into a [`Handles`].
fn collect<T>(handles: impl Iterator<Item = NetRef<T>>) -> Handles<T> {
    Handles(handles.collect::<SmallVec<_>>().into_iter())
}

impl<T: Transport + 'static> Multiplayer<T> {
    /// [`spawn`](Self::spawn), returning the typed handle of the instance root, which must hold
    /// an `R`.
    ///
    /// # Errors
    ///
    /// As [`spawn`](Self::spawn), and [`MultiplayerError::RootType`] if the scene's root holds
    /// no `R` (the instance is freed again; nothing is sent).
    pub fn spawn_as<R: Replicated>(
        &mut self,
        scene: SceneIndex,
        parent: NodeId,
        authority: PeerId,
    ) -> Result<NetRef<R>, MultiplayerError> {
        let root = self.spawn(scene, parent, authority)?;
        match self.scene().net_ref::<R>(root) {
            Some(handle) => Ok(handle),
            None => {
                self.despawn(root);
                Err(MultiplayerError::RootType {
                    scene,
                    expected: std::any::type_name::<R>(),
                })
            }
        }
    }

    /// The handle of every node holding an `R` (in [`Scene::iter`](crate::scene::Scene::iter)
    /// order), copied out so that the loop body may use `self` mutably:
    /// `for player in mp.handles::<Player>() { mp.rpc(player).hit(1)?; }`.
    pub fn handles<R: Replicated>(&self) -> Handles<R> {
        collect(self.scene().iter::<R>().map(|(handle, _)| handle))
    }

    /// The networked nodes holding an `R` that this peer has authority over: on a client, the
    /// ones the server gave it (its player); on the server, the server-owned ones. Copied out
    /// like [`handles`](Self::handles). With one player per client,
    /// `mp.owned::<Player>().next()` is "my player".
    pub fn owned<R: Replicated>(&self) -> Handles<R> {
        self.owned_by(self.local_peer_id())
    }

    /// The networked nodes holding an `R` whose authority is `peer` (server: the nodes a client
    /// owns, such as its player), copied out like [`handles`](Self::handles).
    pub fn owned_by<R: Replicated>(&self, peer: PeerId) -> Handles<R> {
        collect(
            self.scene()
                .iter::<R>()
                .map(|(handle, _)| handle)
                .filter(|handle| {
                    self.net_id(handle.node()).is_some() && self.authority(handle.node()) == peer
                }),
        )
    }
}

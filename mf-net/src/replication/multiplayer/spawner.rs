//! Spawners (the spec's `MultiplayerSpawner`): a spawn function run with typed spawn data on
//! the server and, with the same data, on every client.
//!
//! A spawner is registered on both ends, in the same order, before starting, with
//! [`Multiplayer::register_spawner`]: a name, the absolute path of the parent its nodes go
//! under, and a function `(scene, parent, &data) -> root` that adds exactly one new child of
//! `parent` (the instance root, with any subtree) and returns it. The server calls
//! [`Multiplayer::spawn_with`]; the spawn message (scene index −2) carries the spawner's index
//! and the data's [`NetCodec`] encoding, and each client runs its own function with the decoded
//! data, then applies the replicated state that follows, like any spawn (late joiners included).
//! A node reference in the data travels as an RPC argument does: encoded to the net id of a
//! networked node when `spawn_with` runs, decoded to the client's own node, or unresolved
//! where the client has none.
//! Spawner names, parent paths and data types (stable name and schema hash) are part of the
//! replication fingerprint.
//!
//! The function must be deterministic: given the same data it must build the same nodes, with
//! the same names and the same networked nodes in the same depth-first order, on every peer.
//! A client whose function fails, adds something else than one child of the parent, or names
//! the root differently from the server, undoes what it added under the parent and reports
//! [`SpawnFailed`](crate::replication::multiplayer::MultiplayerEvent::SpawnFailed).

use std::any::TypeId;

use crate::codec::NetCodec;
use crate::refs::{with_scope, Resolve};
use crate::replication::multiplayer::Multiplayer;
use crate::replication::shared::config::MultiplayerError;
use crate::replication::shared::instance::as_scene_mut;
use crate::replication::shared::protocol::{SpawnerPayload, SCENE_SPAWNER};
use crate::replication::shared::spawners::{
    decode_boxed, Entry, RunError, RunFn, Spawner, SpawnerTable,
};
use crate::replication::shared::state::Shared;
use crate::scene::{NodeId, Scene, SceneError};
use crate::transport::{PeerId, Transport};
use crate::wire::NetWriter;

impl<T: Transport + 'static, S: crate::store::Store> Multiplayer<T, S> {
    /// Registers a spawner (both ends, same order, before starting): `name`, the absolute path
    /// of the parent its instances go under (such as `/root/level`, a node every peer loads or
    /// a networked node at the same path everywhere), and the function that builds an instance
    /// from spawn data of type `D`. The function gets the scene, the parent and the data, must
    /// add exactly one new child of the parent (the instance root, named deterministically from
    /// the data) with any subtree, and return it. See [`Spawner`].
    ///
    /// # Errors
    ///
    /// [`AlreadyStarted`](MultiplayerError::AlreadyStarted) once running,
    /// [`DuplicateSpawner`](MultiplayerError::DuplicateSpawner) if `name` is taken,
    /// [`TooManySpawners`](MultiplayerError::TooManySpawners) past `u16::MAX + 1`.
    pub fn register_spawner<D, F>(
        &mut self,
        name: &str,
        parent_path: &str,
        spawn: F,
    ) -> Result<Spawner<D>, MultiplayerError>
    where
        D: NetCodec + 'static,
        F: Fn(&mut Scene, NodeId, &D) -> Result<NodeId, SceneError> + 'static,
    {
        if self.bus.is_some() {
            return Err(MultiplayerError::AlreadyStarted);
        }
        let table = &mut self.core.shared.spawners;
        if table.index_of(name).is_some() {
            return Err(MultiplayerError::DuplicateSpawner(name.to_owned()));
        }
        let index =
            u16::try_from(table.entries.len()).map_err(|_| MultiplayerError::TooManySpawners)?;
        let run: RunFn = Box::new(move |scene, parent, data| match data.downcast_ref::<D>() {
            Some(data) => spawn(scene, parent, data),
            // Unreachable: entries are looked up by their data type.
            None => Err(SceneError::NoSuchNode(parent)),
        });
        table.entries.push(Entry {
            name: name.to_owned(),
            parent_path: parent_path.to_owned(),
            data_name: D::NAME,
            data_schema: D::SCHEMA_HASH,
            data_type: TypeId::of::<D>(),
            run,
            decode: decode_boxed::<D>,
        });
        Ok(Spawner::new(index))
    }

    /// The spawner registered as `name`, if its data type is `D`.
    pub fn spawner<D: NetCodec + 'static>(&self, name: &str) -> Option<Spawner<D>> {
        let table = &self.core.shared.spawners;
        let index = table.index_of(name)?;
        (table.entries[index].data_type == TypeId::of::<D>())
            .then(|| u16::try_from(index).ok().map(Spawner::new))
            .flatten()
    }

    /// Spawns through `spawner` with `data` and authority `authority` (server or offline only):
    /// runs the spawner's function under its parent and networks the instance it returns (the
    /// root and each descendant holding a value take consecutive network ids, depth-first). The
    /// spawn message leaves at the end of the frame, carrying the data, with the state at that
    /// moment; each client runs its own spawner with the data, then applies the state. A
    /// [`NetRef`](crate::scene::NetRef) in the data is encoded now, as an RPC argument is: a
    /// networked node travels as its net id and reaches each client's function as that
    /// client's own node, or unresolved where the client does not have it (not relevant to
    /// it, despawned, or, for a late joiner, spawned after it); a node not networked yet
    /// (the instance's own nodes among them) travels as none.
    ///
    /// # Errors
    ///
    /// [`NotServer`](MultiplayerError::NotServer),
    /// [`UnknownPeer`](MultiplayerError::UnknownPeer),
    /// [`UnknownSpawner`](MultiplayerError::UnknownSpawner) (a handle of another instance, or
    /// another data type), [`NoSuchPath`](MultiplayerError::NoSuchPath) if the spawner's parent
    /// is not in the tree, the function's own error as
    /// [`Scene`](MultiplayerError::Scene), or [`SpawnerRoot`](MultiplayerError::SpawnerRoot)
    /// if it did not add exactly one child of the parent and return it, as for
    /// [`spawn`](crate::replication::multiplayer::Multiplayer::spawn) [`NameTooLong`](MultiplayerError::NameTooLong) and
    /// [`StateOverLimit`](MultiplayerError::StateOverLimit), or
    /// [`SpawnDataOverLimit`](MultiplayerError::SpawnDataOverLimit) for data holding a string
    /// longer than clients read. On error, whatever the function added under the parent is
    /// removed.
    pub fn spawn_with<D: NetCodec + 'static>(
        &mut self,
        spawner: Spawner<D>,
        data: &D,
        authority: PeerId,
    ) -> Result<NodeId, MultiplayerError> {
        let (server, shared) = self.spawning(authority)?;
        let Shared {
            store, spawners, ..
        } = shared;
        let entry = spawners
            .entries
            .get(usize::from(spawner.index))
            .filter(|e| e.data_type == TypeId::of::<D>())
            .ok_or(MultiplayerError::UnknownSpawner(spawner.index))?;
        let scene = as_scene_mut(&mut **store).ok_or(MultiplayerError::NeedsScene)?;
        let parent = scene
            .find(&entry.parent_path)
            .ok_or_else(|| MultiplayerError::NoSuchPath(entry.parent_path.clone()))?;
        let root = match SpawnerTable::run(entry, scene, parent, data) {
            Ok(root) => root,
            Err(RunError::Function(error)) => return Err(MultiplayerError::Scene(error)),
            Err(RunError::Root(root)) => return Err(MultiplayerError::SpawnerRoot(root)),
        };
        let name = scene.name(root).unwrap_or_default();
        let checked = server.check_names(scene, parent, name);
        if let Err(error) = checked.and_then(|()| server.check_states(&mut **store, root)) {
            store.despawn(root);
            return Err(error);
        }
        let mut w = NetWriter::new();
        // Node references in the data travel as net ids, as an RPC's arguments do.
        with_scope(Some(&server.by_node), Resolve::Argument, || {
            data.encode(&mut w)
        });
        if w.over_limit() {
            store.despawn(root);
            return Err(MultiplayerError::SpawnDataOverLimit);
        }
        let added = server.add_group(&**store, root, SCENE_SPAWNER, Some(parent), authority);
        let first = match added {
            Ok(first) => first,
            Err(error) => {
                store.despawn(root);
                return Err(error);
            }
        };
        server.set_spawner_payload(
            first,
            SpawnerPayload {
                index: u32::from(spawner.index),
                data: w.into_vec(),
            },
        );
        Ok(root)
    }
}

#[cfg(test)]
mod tests {
    use crate::replication::shared::protocol::{
        ParentRef, SpawnHeader, SpawnerPayload, SCENE_SPAWNER,
    };
    use crate::wire::{NetReader, NetWriter};

    #[test]
    fn a_spawner_spawn_header_carries_the_index_and_data() {
        let header = SpawnHeader {
            first_net_id: 3,
            scene: SCENE_SPAWNER,
            parent: ParentRef::Net(1),
            name: "a".into(),
            authority: 1,
            count: 2,
            spawner: Some(SpawnerPayload {
                index: 5,
                data: vec![0xaa, 0xbb],
            }),
            typed: Vec::new(),
        };
        let mut w = NetWriter::new();
        header.write(&mut w);
        // first id, scene −2 (zig-zag 3), parent net id, name, authority, count, spawner index,
        // data length, data.
        assert_eq!(w.as_slice(), [3, 3, 1, 1, b'a', 1, 2, 5, 2, 0xaa, 0xbb]);
        let mut r = NetReader::new(w.as_slice());
        assert_eq!(SpawnHeader::read(&mut r).unwrap(), header);
        assert!(r.finish().is_ok());
        // Data claimed past the end is refused.
        let mut r = NetReader::new(&w.as_slice()[..w.len() - 1]);
        assert!(SpawnHeader::read(&mut r).is_err());
    }
}

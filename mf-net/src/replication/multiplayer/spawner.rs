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
//! Spawner names, parent paths and data types (stable name and schema hash) are part of the
//! replication fingerprint.
//!
//! The function must be deterministic: given the same data it must build the same nodes, with
//! the same names and the same networked nodes in the same depth-first order, on every peer.
//! A client whose function fails, adds something else than one child of the parent, or names
//! the root differently from the server, undoes what it added under the parent and reports
//! [`SpawnFailed`](super::MultiplayerEvent::SpawnFailed).

use std::any::{Any, TypeId};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

use super::{Multiplayer, MultiplayerError};
use crate::codec::{self, NetCodec};
use crate::replication::protocol::{SpawnerPayload, SCENE_SPAWNER};
use crate::scene::{NodeId, Scene, SceneError, SceneShape};
use crate::transport::{PeerId, Transport};
use crate::wire::{DecodeError, NetWriter};

/// A registered spawner (the spec's `MultiplayerSpawner`) whose spawn data is a `D`, returned
/// by [`Multiplayer::register_spawner`] (or looked up with [`Multiplayer::spawner`]) and passed
/// to [`Multiplayer::spawn_with`]. `Copy`, `Eq`, `Hash` and `Debug` hold for every `D`.
///
/// Both ends register the same spawners, in the same order, before starting: a name, the
/// absolute path of the parent its instances go under, and a function `(scene, parent, &data)
/// -> root` that adds exactly one new child of `parent` (the instance root, with any subtree)
/// and returns it. On the server, [`Multiplayer::spawn_with`] runs it and networks the
/// instance; the spawn message (scene index −2) carries the spawner's index and the data's
/// [`NetCodec`] encoding, and each client runs its own function with the decoded data, then
/// applies the replicated state that follows, like any spawn (late joiners included), and
/// raises [`NodeSpawned`](super::MultiplayerEvent::NodeSpawned). Spawner names, parent paths
/// and data types (stable name and schema hash) are part of the replication fingerprint.
///
/// The function must be deterministic: given the same data it must build the same nodes, with
/// the same names and the same networked nodes in the same depth-first order, on every peer
/// (the instance's shape may depend on the data). A client whose function fails, adds something
/// else than one child of the parent, or names the root differently from the server, undoes
/// what it added under the parent and raises
/// [`SpawnFailed`](super::MultiplayerEvent::SpawnFailed); snapshots skip those ids.
pub struct Spawner<D> {
    index: u16,
    _data: PhantomData<fn() -> D>,
}

impl<D> Spawner<D> {
    fn new(index: u16) -> Self {
        Self {
            index,
            _data: PhantomData,
        }
    }

    /// The spawner's index: its registration order, from 0 (what goes on the wire).
    pub fn index(self) -> u16 {
        self.index
    }
}

impl<D> Clone for Spawner<D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<D> Copy for Spawner<D> {}

impl<D> PartialEq for Spawner<D> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}

impl<D> Eq for Spawner<D> {}

impl<D> Hash for Spawner<D> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.index.hash(state);
    }
}

impl<D> fmt::Debug for Spawner<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Spawner<{}>({})", std::any::type_name::<D>(), self.index)
    }
}

/// The spawn function with the data type erased (the data arrives as `&dyn Any`).
type RunFn = Box<dyn Fn(&mut Scene, NodeId, &dyn Any) -> Result<NodeId, SceneError>>;

/// Decodes spawn data into a boxed `D`.
type DecodeFn = fn(&[u8]) -> Result<Box<dyn Any>, DecodeError>;

struct Entry {
    name: String,
    parent_path: String,
    data_name: &'static str,
    data_schema: u64,
    data_type: TypeId,
    run: RunFn,
    decode: DecodeFn,
}

fn decode_boxed<D: NetCodec + 'static>(bytes: &[u8]) -> Result<Box<dyn Any>, DecodeError> {
    Ok(Box::new(codec::from_slice::<D>(bytes)?))
}

/// Why running a spawn function did not produce an instance.
enum RunError {
    /// The function returned an error.
    Function(SceneError),
    /// It succeeded but did not add exactly one new child of the parent, returned as the root.
    Root(NodeId),
}

/// The spawners of one [`Multiplayer`], in registration order.
#[derive(Default)]
pub(crate) struct SpawnerTable {
    entries: Vec<Entry>,
}

impl SpawnerTable {
    fn index_of(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.name == name)
    }

    /// How many spawners are registered.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Every spawner as a pseudo scene shape for the handshake: named
    /// `spawner:<name>@<parent path>`, with the data type's stable name and schema hash as its
    /// one "node". Appended after the spawnable scenes.
    pub(crate) fn shapes(&self) -> impl Iterator<Item = SceneShape> + '_ {
        self.entries.iter().map(|e| SceneShape {
            name: format!("spawner:{}@{}", e.name, e.parent_path),
            types: vec![(e.data_name, e.data_schema)],
        })
    }

    /// Each spawner's index, name, parent path, data type name and schema hash.
    pub(crate) fn describe(&self) -> impl Iterator<Item = (usize, &str, &str, &'static str, u64)> {
        self.entries.iter().enumerate().map(|(i, e)| {
            (
                i,
                e.name.as_str(),
                e.parent_path.as_str(),
                e.data_name,
                e.data_schema,
            )
        })
    }

    /// Runs `entry`'s function under `parent` with `data` and checks that it added exactly one
    /// new child of `parent` and returned it. On any failure, every child it added under
    /// `parent` is removed again.
    fn run(
        entry: &Entry,
        scene: &mut Scene,
        parent: NodeId,
        data: &dyn Any,
    ) -> Result<NodeId, RunError> {
        let before: Vec<NodeId> = scene.children(parent).to_vec();
        let result = (entry.run)(scene, parent, data);
        let added: Vec<NodeId> = scene
            .children(parent)
            .iter()
            .copied()
            .filter(|c| !before.contains(c))
            .collect();
        let outcome = match result {
            Err(error) => Err(RunError::Function(error)),
            Ok(root) if added == [root] => Ok(root),
            Ok(root) => Err(RunError::Root(root)),
        };
        if outcome.is_err() {
            for node in added {
                scene.remove(node);
            }
        }
        outcome
    }

    /// Client: runs spawner `payload.index` with its decoded data under `parent`; the root must
    /// be named `name`, as on the server.
    pub(crate) fn spawn_remote(
        &self,
        scene: &mut Scene,
        parent: NodeId,
        name: &str,
        payload: &SpawnerPayload,
    ) -> Result<NodeId, &'static str> {
        let entry = usize::try_from(payload.index)
            .ok()
            .and_then(|i| self.entries.get(i))
            .ok_or("unknown spawner index")?;
        let data = (entry.decode)(&payload.data).map_err(|_| "spawn data does not decode")?;
        let root = match Self::run(entry, scene, parent, data.as_ref()) {
            Ok(root) => root,
            Err(RunError::Function(_)) => return Err("the spawn function failed"),
            Err(RunError::Root(_)) => {
                return Err("the spawn function did not add exactly one child of the parent")
            }
        };
        if scene.name(root) != Some(name) {
            scene.remove(root);
            return Err("the spawn function named the root differently than on the server");
        }
        Ok(root)
    }
}

impl<T: Transport + 'static> Multiplayer<T> {
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
    /// moment; each client runs its own spawner with the data, then applies the state.
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
    /// [`spawn`](super::Multiplayer::spawn) [`NameTooLong`](MultiplayerError::NameTooLong) and
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
        let entry = shared
            .spawners
            .entries
            .get(usize::from(spawner.index))
            .filter(|e| e.data_type == TypeId::of::<D>())
            .ok_or(MultiplayerError::UnknownSpawner(spawner.index))?;
        let parent = shared
            .scene
            .find(&entry.parent_path)
            .ok_or_else(|| MultiplayerError::NoSuchPath(entry.parent_path.clone()))?;
        let root = match SpawnerTable::run(entry, &mut shared.scene, parent, data) {
            Ok(root) => root,
            Err(RunError::Function(error)) => return Err(MultiplayerError::Scene(error)),
            Err(RunError::Root(root)) => return Err(MultiplayerError::SpawnerRoot(root)),
        };
        let name = shared.scene.name(root).unwrap_or_default();
        let checked = server.check_names(&shared.scene, parent, name);
        if let Err(error) = checked.and_then(|()| server.check_states(&shared.scene, root)) {
            shared.scene.remove(root);
            return Err(error);
        }
        let mut w = NetWriter::new();
        data.encode(&mut w);
        if w.over_limit() {
            shared.scene.remove(root);
            return Err(MultiplayerError::SpawnDataOverLimit);
        }
        let added = server.add_group(&shared.scene, root, SCENE_SPAWNER, parent, authority);
        let first = match added {
            Ok(first) => first,
            Err(error) => {
                shared.scene.remove(root);
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
    use crate::replication::protocol::{ParentRef, SpawnHeader, SpawnerPayload, SCENE_SPAWNER};
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

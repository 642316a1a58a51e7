//! The spawners of one runtime ([`SpawnerTable`]) and the typed handle of one ([`Spawner`]);
//! [`Multiplayer::register_spawner`](crate::replication::Multiplayer::register_spawner) fills
//! the table.

use std::any::{Any, TypeId};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

use crate::codec::{self, NetCodec};
use crate::refs::{with_scope, NetIdMap, Resolve};
use crate::replication::shared::protocol::SpawnerPayload;
use crate::scene::{NodeId, Scene, SceneError, SceneShape};
use crate::wire::DecodeError;

/// A registered spawner (the spec's `MultiplayerSpawner`) whose spawn data is a `D`, returned
/// by [`Multiplayer::register_spawner`](crate::replication::Multiplayer::register_spawner) (or looked up with [`Multiplayer::spawner`](crate::replication::Multiplayer::spawner)) and passed
/// to [`Multiplayer::spawn_with`](crate::replication::Multiplayer::spawn_with). `Copy`, `Eq`, `Hash` and `Debug` hold for every `D`.
///
/// Both ends register the same spawners, in the same order, before starting: a name, the
/// absolute path of the parent its instances go under, and a function `(scene, parent, &data)
/// -> root` that adds exactly one new child of `parent` (the instance root, with any subtree)
/// and returns it. On the server, [`Multiplayer::spawn_with`](crate::replication::Multiplayer::spawn_with) runs it and networks the
/// instance; the spawn message (scene index −2) carries the spawner's index and the data's
/// [`NetCodec`] encoding, and each client runs its own function with the decoded data, then
/// applies the replicated state that follows, like any spawn (late joiners included), and
/// raises [`NodeSpawned`](crate::replication::multiplayer::MultiplayerEvent::NodeSpawned). Spawner names, parent paths
/// and data types (stable name and schema hash) are part of the replication fingerprint. A
/// [`NetRef`](crate::scene::NetRef) in the data reaches each client's function as that
/// client's own node, as an RPC argument does (see
/// [`Multiplayer::spawn_with`](crate::replication::Multiplayer::spawn_with)).
///
/// The function must be deterministic: given the same data it must build the same nodes, with
/// the same names and the same networked nodes in the same depth-first order, on every peer
/// (the instance's shape may depend on the data). A client whose function fails, adds something
/// else than one child of the parent, or names the root differently from the server, undoes
/// what it added under the parent and raises
/// [`SpawnFailed`](crate::replication::multiplayer::MultiplayerEvent::SpawnFailed); snapshots skip those ids.
pub struct Spawner<D> {
    pub(crate) index: u16,
    _data: PhantomData<fn() -> D>,
}

impl<D> Spawner<D> {
    pub(crate) fn new(index: u16) -> Self {
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
pub(crate) type RunFn = Box<dyn Fn(&mut Scene, NodeId, &dyn Any) -> Result<NodeId, SceneError>>;

/// Decodes spawn data into a boxed `D`.
pub(crate) type DecodeFn = fn(&[u8]) -> Result<Box<dyn Any>, DecodeError>;

pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) parent_path: String,
    pub(crate) data_name: &'static str,
    pub(crate) data_schema: u64,
    pub(crate) data_type: TypeId,
    pub(crate) run: RunFn,
    pub(crate) decode: DecodeFn,
}

pub(crate) fn decode_boxed<D: NetCodec + 'static>(
    bytes: &[u8],
) -> Result<Box<dyn Any>, DecodeError> {
    Ok(Box::new(codec::from_slice::<D>(bytes)?))
}

/// Why running a spawn function did not produce an instance.
pub(crate) enum RunError {
    /// The function returned an error.
    Function(SceneError),
    /// It succeeded but did not add exactly one new child of the parent, returned as the root.
    Root(NodeId),
}

/// The spawners of one [`Multiplayer`](crate::replication::Multiplayer), in registration order.
#[derive(Default)]
pub(crate) struct SpawnerTable {
    pub(crate) entries: Vec<Entry>,
}

impl SpawnerTable {
    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
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
    pub(crate) fn run(
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
    /// be named `name`, as on the server. Node references in the data decode through
    /// `net_ids`, the client's map, as an RPC's arguments do (a node the client does not have
    /// is unresolved).
    pub(crate) fn spawn_remote(
        &self,
        (scene, net_ids): (&mut Scene, &NetIdMap),
        parent: NodeId,
        name: &str,
        payload: &SpawnerPayload,
    ) -> Result<NodeId, &'static str> {
        let entry = usize::try_from(payload.index)
            .ok()
            .and_then(|i| self.entries.get(i))
            .ok_or("unknown spawner index")?;
        let decode = || (entry.decode)(&payload.data);
        let data = with_scope(Some(net_ids), Resolve::Argument, decode)
            .map_err(|_| "spawn data does not decode")?;
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

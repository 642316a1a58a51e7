//! The storage as spawns see it: the networked nodes of a spawned instance, in the order both
//! ends number them, and what only the built-in scene has (a tree, detached subtrees).

use std::any::Any;

use crate::replicated::registry::{ReplicatedTypeId, ReplicationRegistry};
use crate::replicated::RegisteredType;
use crate::scene::{NodeId, Scene};
use crate::store::Store;

/// The networked nodes of an instance rooted at `root`: the root, then every descendant holding
/// a value, depth-first.
pub(crate) fn instance_nodes(scene: &Scene, root: NodeId) -> Vec<NodeId> {
    let mut out = vec![root];
    out.extend(scene.networked_depth_first(root).filter(|&n| n != root));
    out
}

/// `store` as the built-in scene, if it is one.
pub(crate) fn as_scene(store: &dyn Store) -> Option<&Scene> {
    (store as &dyn Any).downcast_ref()
}

/// `store` as the built-in scene, mutably, if it is one.
pub(crate) fn as_scene_mut(store: &mut dyn Store) -> Option<&mut Scene> {
    (store as &mut dyn Any).downcast_mut()
}

/// Whether `node` is still in `store`: alive, or (in the scene) detached but not freed, which
/// the end of the frame decides.
pub(crate) fn exists(store: &dyn Store, node: NodeId) -> bool {
    match as_scene(store) {
        Some(scene) => scene.contains(node),
        None => store.alive(node),
    }
}

/// The registry entry of `node`'s value's type.
pub(crate) fn value_info(store: &dyn Store, node: NodeId) -> Option<&'static RegisteredType> {
    if let Some(scene) = as_scene(store) {
        return scene.value_info(node);
    }
    let registry = ReplicationRegistry::global();
    registry.get(registry.id_of_type_id(store.value_type(node)?)?)
}

/// [`value_info`] with the type's id in the replication registry (the number bit-packed
/// entries name it by), from one lookup.
pub(crate) fn value_type(
    store: &dyn Store,
    node: NodeId,
) -> Option<(ReplicatedTypeId, &'static RegisteredType)> {
    let registry = ReplicationRegistry::global();
    let id = registry.id_of_type_id(store.value_type(node)?)?;
    Some((id, registry.get(id)?))
}

/// `node`'s parent, in a storage with a tree.
pub(crate) fn parent(store: &dyn Store, node: NodeId) -> Option<NodeId> {
    as_scene(store)?.parent(node)
}

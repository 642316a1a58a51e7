//! [`NetIdMap`]: a runtime's two-way map between its nodes and their net ids, shared with the
//! reference codecs while a [scope](super::scope) lends it.

use std::any::TypeId;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::rc::Rc;

use super::renames::Renames;
use crate::int_hasher::IntHasher;
use crate::scene::Scene;
use crate::store::NodeId;

#[derive(Debug, Default)]
struct Maps {
    /// Keyed by the storage's own ids: hashed without a seed. (Net ids, which a client's
    /// server chooses, keep the seeded hasher.)
    to_net: HashMap<NodeId, u32, BuildHasherDefault<IntHasher>>,
    /// The node of each net id, and the type of its value when it was networked.
    from_net: HashMap<u32, (NodeId, Option<TypeId>)>,
    /// A server's: the networked nodes a reference has been encoded to (see
    /// [`NetIdMap::was_named`]); `None` on a client.
    named: Option<HashSet<NodeId, BuildHasherDefault<IntHasher>>>,
    /// A server's: the nodes references went to as none, and those that are renamed (see
    /// [`NetIdMap::take_renamed`]).
    renames: Renames,
}

/// The net id of every networked node of a server or a client, and the node (and its value's
/// type) of every net id. Cloning shares the map: the runtime keeps one and lends clones to
/// [`with_scope`](super::with_scope).
#[derive(Debug, Clone, Default)]
pub(crate) struct NetIdMap(Rc<RefCell<Maps>>);

impl NetIdMap {
    /// A server's map, which also remembers which of its nodes references were encoded to
    /// ([`was_named`](Self::was_named)).
    pub(crate) fn noting_names() -> Self {
        let maps = Maps {
            named: Some(HashSet::default()),
            ..Maps::default()
        };
        Self(Rc::new(RefCell::new(maps)))
    }

    /// `node` is networked as `net_id`, holding a value of type `value_type`.
    pub(crate) fn insert(&self, node: NodeId, net_id: u32, value_type: Option<TypeId>) {
        let mut maps = self.0.borrow_mut();
        if let Some(old) = maps.to_net.insert(node, net_id) {
            maps.from_net.remove(&old);
        }
        maps.from_net.insert(net_id, (node, value_type));
        if maps.named.is_some() {
            maps.renames.networked(node);
        }
    }

    /// `node` is no longer networked.
    pub(crate) fn remove(&self, node: NodeId) {
        let mut maps = self.0.borrow_mut();
        if let Some(id) = maps.to_net.remove(&node) {
            maps.from_net.remove(&id);
        }
        if let Some(named) = &mut maps.named {
            named.remove(&node);
        }
    }

    /// Forgets every node.
    pub(crate) fn clear(&self) {
        let mut maps = self.0.borrow_mut();
        maps.to_net.clear();
        maps.from_net.clear();
        if let Some(named) = &mut maps.named {
            named.clear();
        }
        maps.renames.clear();
    }

    /// The net id of `node`, if it is networked.
    pub(crate) fn get(&self, node: NodeId) -> Option<u32> {
        self.0.borrow().to_net.get(&node).copied()
    }

    /// The net id of the nearest networked node from `node` up `scene` (0: none): what a
    /// despawn takes a group spawned or moved under `node` with.
    pub(crate) fn networked_up(&self, scene: &Scene, node: NodeId) -> u32 {
        let mut at = Some(node);
        while let Some(n) = at {
            if let Some(id) = self.get(n) {
                return id;
            }
            at = scene.parent(n);
        }
        0
    }

    /// The net id a reference to `node` is encoded as, if it is networked (on a server, noted
    /// for [`was_named`](Self::was_named)).
    pub(crate) fn encode(&self, node: NodeId) -> Option<u32> {
        let mut maps = self.0.borrow_mut();
        let maps = &mut *maps;
        let id = maps.to_net.get(&node).copied();
        if let Some(named) = &mut maps.named {
            if id.is_some() {
                named.insert(node);
            } else {
                maps.renames.missed(node);
            }
        }
        id
    }

    /// Server: references to `node` may encode otherwise than when states last named it (an
    /// engine's reference that names an object by one of several nodes, another of which it
    /// names now): [`take_renamed`](Self::take_renamed) gives it.
    pub(crate) fn renamed(&self, node: NodeId) {
        self.0.borrow_mut().renames.renamed(node);
    }

    /// Server: the nodes whose references encode otherwise than when states last named them
    /// (replacing what `out` held): each was networked after a reference to it went as none,
    /// or was [`renamed`](Self::renamed). The states that name them are to be sent again.
    pub(crate) fn take_renamed(&self, out: &mut Vec<NodeId>) {
        self.0.borrow_mut().renames.take(out);
    }

    /// Server: whether a reference was encoded to `node` since it was networked: a client
    /// that does not have it may hold a member back for it.
    pub(crate) fn was_named(&self, node: NodeId) -> bool {
        self.0
            .borrow()
            .named
            .as_ref()
            .is_some_and(|named| named.contains(&node))
    }

    /// Whether `node` is networked.
    pub(crate) fn contains(&self, node: NodeId) -> bool {
        self.0.borrow().to_net.contains_key(&node)
    }

    /// The node networked as `net_id`, and its value's type.
    pub(crate) fn node_of(&self, net_id: u32) -> Option<(NodeId, Option<TypeId>)> {
        self.0.borrow().from_net.get(&net_id).copied()
    }
}

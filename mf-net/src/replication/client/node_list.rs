//! [`NodeList`]: a client's networked nodes in net id order, with a table by net id that finds
//! most of them without a search, and the subtrees despawns take.

use std::ops::Range;

use crate::replication::shared::columns::ValueAt;
use crate::replication::shared::subtree::subtree;
use crate::scene::NodeId;
use crate::transport::PeerId;

/// The highest net id the table by net id grows to with `live` networked nodes: the table
/// stays within a few times the live node count (plus some slack), whatever ids a server sends.
fn dense_limit(live: usize) -> usize {
    live.saturating_mul(4).saturating_add(4096)
}

/// A networked node on a client. It stays listed after game code frees its scene node locally
/// (its id is then *gone locally*: snapshot entries for it are skipped, yet acknowledged)
/// until the server despawns it or a node it was spawned under.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientNode {
    pub(crate) net_id: u32,
    pub(crate) node: NodeId,
    pub(crate) authority: PeerId,
    /// The net id of its nearest networked ancestor when it was spawned (0: none).
    pub(crate) parent: u32,
    /// Where its value was last found, for a net id past the table by net id (see
    /// [`Located`]; the table keeps it for the others).
    at: ValueAt,
}

impl ClientNode {
    /// Node `net_id`, the scene node `node`, with `authority`, spawned under net id `parent`
    /// (0: none); its value not looked for yet.
    pub(crate) fn new(net_id: u32, node: NodeId, authority: PeerId, parent: u32) -> Self {
        Self {
            net_id,
            node,
            authority,
            parent,
            at: ValueAt::UNPLACED,
        }
    }

    /// Whether it was spawned under a node with a higher net id.
    fn inverted(&self) -> bool {
        self.parent > self.net_id
    }

    /// It, as the list finds it by net id.
    fn located(&self) -> Located {
        Located {
            node: self.node,
            at: self.at,
        }
    }
}

/// A networked node as the list finds it by net id: the node, and where its value was last
/// found, so that a snapshot entry reaches its value with one lookup. The row is a hint,
/// checked at each use and moved when stale; the column, once found, is the node's (its type's
/// column, which a node keeps while it is listed: it leaves the list when its row goes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Located {
    pub(crate) node: NodeId,
    pub(crate) at: ValueAt,
}

/// A client's networked nodes (see the [module documentation](self)).
#[derive(Default)]
pub(crate) struct NodeList {
    /// Sorted by net id.
    nodes: Vec<ClientNode>,
    /// The node of every net id below its length (`None`: no such node; a node no longer in the
    /// scene: freed locally), the same as a search of `nodes`: snapshots find their nodes here
    /// without a search. Net ids are consecutive from 1, so it is dense; it only grows to ids
    /// at most [`dense_limit`] (ids past its end are searched in `nodes`), so a far-off id
    /// cannot make it huge.
    by_id: Vec<Option<Located>>,
    /// How many listed nodes were spawned under a node with a higher net id (ids are handed
    /// out again once the fresh ones run out): while there are none, a node's subtree lies at
    /// and after it in `nodes`, and one pass from there finds it.
    inverted: usize,
    /// The net ids the last [`remove_subtree`](Self::remove_subtree) took, ascending (scratch,
    /// capacity kept).
    removed: Vec<u32>,
}

impl NodeList {
    /// How many nodes are listed.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Every listed node, in net id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &ClientNode> {
        self.nodes.iter()
    }

    /// Forgets every node.
    pub(crate) fn clear(&mut self) {
        self.nodes.clear();
        self.by_id.clear();
        self.inverted = 0;
    }

    /// Where node `net_id` is listed.
    pub(crate) fn index_of(&self, net_id: u32) -> Option<usize> {
        self.nodes.binary_search_by_key(&net_id, |n| n.net_id).ok()
    }

    /// Whether node `net_id` was spawned under node `top` (or is `top`): a walk up its net
    /// parents, as long as the list (a cycle of parents ends it).
    pub(crate) fn is_under(&self, net_id: u32, top: u32) -> bool {
        let mut at = net_id;
        for _ in 0..=self.nodes.len() {
            if at == top {
                return true;
            }
            match self.index_of(at) {
                Some(i) if self.nodes[i].parent != 0 => at = self.nodes[i].parent,
                _ => return false,
            }
        }
        false
    }

    /// The node listed at `i` (from [`index_of`](Self::index_of)), its authority set to
    /// `peer`.
    pub(crate) fn set_authority(&mut self, i: usize, peer: PeerId) -> Option<NodeId> {
        let n = self.nodes.get_mut(i)?;
        n.authority = peer;
        Some(n.node)
    }

    /// The authority of node `net_id`.
    pub(crate) fn authority(&self, net_id: u32) -> Option<PeerId> {
        self.index_of(net_id).map(|i| self.nodes[i].authority)
    }

    /// The scene node of `net_id` with where its value was last found.
    #[inline]
    pub(crate) fn locate(&self, net_id: u32) -> Option<Located> {
        match self.by_id.get(net_id as usize) {
            Some(&located) => located,
            None => self.index_of(net_id).map(|i| self.nodes[i].located()),
        }
    }

    /// `net_id`'s value was found at `at`: the next entry for it looks there first.
    pub(crate) fn moved(&mut self, net_id: u32, at: ValueAt) {
        match self.by_id.get_mut(net_id as usize) {
            Some(Some(located)) => located.at = at,
            Some(None) => {}
            None => {
                if let Some(i) = self.index_of(net_id) {
                    self.nodes[i].at = at;
                }
            }
        }
    }

    /// The nodes listed with net ids from `first` to before `end`.
    pub(crate) fn in_range(&self, first: u32, end: u32) -> &[ClientNode] {
        &self.nodes[self.range(first, end)]
    }

    /// Where the nodes with net ids from `first` to before `end` are listed.
    fn range(&self, first: u32, end: u32) -> Range<usize> {
        let lo = self.nodes.partition_point(|n| n.net_id < first);
        let hi = self.nodes.partition_point(|n| n.net_id < end);
        lo..hi.max(lo)
    }

    /// Forgets the nodes with net ids from `first` to before `end`, each handed to `forget`
    /// first.
    pub(crate) fn forget_range(
        &mut self,
        first: u32,
        end: u32,
        mut forget: impl FnMut(&ClientNode),
    ) {
        let range = self.range(first, end);
        for n in self.nodes.drain(range) {
            forget(&n);
            self.inverted -= usize::from(n.inverted());
            if let Some(slot) = self.by_id.get_mut(n.net_id as usize) {
                *slot = None;
            }
        }
    }

    /// Lists `node` (its net id not listed), its value not looked for yet.
    pub(crate) fn insert(&mut self, node: ClientNode) {
        let at = self.nodes.partition_point(|n| n.net_id < node.net_id);
        self.inverted += usize::from(node.inverted());
        self.nodes.insert(at, node);
        self.set_by_id(&node);
    }

    /// Records `node` (just listed) in `by_id`, growing the table over its net id when it is
    /// not too far off.
    fn set_by_id(&mut self, node: &ClientNode) {
        let id = node.net_id as usize;
        if id >= self.by_id.len() {
            if id > dense_limit(self.nodes.len()) {
                return;
            }
            // The ids the table now covers were only in `nodes` until now.
            let from = self.by_id.len();
            self.by_id.resize(id + 1, None);
            let start = self.nodes.partition_point(|n| (n.net_id as usize) < from);
            for n in &self.nodes[start..] {
                match self.by_id.get_mut(n.net_id as usize) {
                    Some(slot) => *slot = Some(n.located()),
                    None => break,
                }
            }
        }
        self.by_id[id] = Some(node.located());
    }

    /// The net ids the last [`remove_subtree`](Self::remove_subtree) took, ascending.
    pub(crate) fn removed(&self) -> &[u32] {
        &self.removed
    }

    /// Node `i` (an index of [`index_of`](Self::index_of)) hangs under net id `parent` from now
    /// on (0: none).
    pub(crate) fn set_parent(&mut self, i: usize, parent: u32) {
        let Some(n) = self.nodes.get_mut(i) else {
            return;
        };
        self.inverted -= usize::from(n.inverted());
        n.parent = parent;
        self.inverted += usize::from(n.inverted());
    }

    /// Forgets node `id` and every node spawned under it, each handed to `forget` first, and
    /// lists their net ids in [`removed`](Self::removed), in one pass that moves each node it
    /// keeps down over those it forgets. Parents mostly have lower net ids than the nodes
    /// spawned under them: then the pass starts at `id` and finds the subtree as it goes.
    pub(crate) fn remove_subtree(&mut self, id: u32, mut forget: impl FnMut(&ClientNode)) {
        let in_order = self.inverted == 0;
        let start = match in_order {
            true => self.nodes.partition_point(|n| n.net_id < id),
            false => {
                self.find_subtree(id);
                0
            }
        };
        let removed = &mut self.removed;
        if in_order {
            removed.clear();
            removed.push(id);
        }
        let mut kept = start;
        for k in start..self.nodes.len() {
            let n = self.nodes[k];
            let gone = match in_order {
                true => {
                    n.net_id == id || (n.parent != 0 && removed.binary_search(&n.parent).is_ok())
                }
                false => removed.binary_search(&n.net_id).is_ok(),
            };
            if !gone {
                self.nodes[kept] = n;
                kept += 1;
                continue;
            }
            if in_order && removed.last() != Some(&n.net_id) {
                removed.push(n.net_id);
            }
            forget(&n);
            self.inverted -= usize::from(n.inverted());
            if let Some(slot) = self.by_id.get_mut(n.net_id as usize) {
                *slot = None;
            }
        }
        self.nodes.truncate(kept);
        debug_assert_eq!(
            self.inverted,
            self.nodes.iter().filter(|n| n.inverted()).count(),
            "the count of nodes spawned under a higher net id"
        );
    }

    /// Node `id` and the net ids of every node spawned under it, ascending.
    pub(crate) fn subtree(&self, id: u32) -> Vec<u32> {
        let mut found = Vec::new();
        subtree(|| parents(&self.nodes), id, &mut found);
        found
    }

    /// Lists in `removed` (ascending) node `id` and every node spawned under it.
    fn find_subtree(&mut self, id: u32) {
        let nodes = &self.nodes;
        subtree(|| parents(nodes), id, &mut self.removed);
    }
}

/// Each of `nodes`' net id and its parent's.
fn parents(nodes: &[ClientNode]) -> impl Iterator<Item = (u32, u32)> + '_ {
    nodes.iter().map(|n| (n.net_id, n.parent))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{ClientNode, NodeList};
    use crate::scene::NodeId;
    use crate::transport::PeerId;

    /// The subtree of `id` in `parents` (net id → parent net id), found the slow way.
    fn subtree(parents: &BTreeMap<u32, u32>, id: u32) -> Vec<u32> {
        let mut found = vec![id];
        loop {
            let more: Vec<u32> = parents
                .iter()
                .filter(|&(n, p)| *p != 0 && found.contains(p) && !found.contains(n))
                .map(|(&n, _)| n)
                .collect();
            if more.is_empty() {
                found.sort_unstable();
                return found;
            }
            found.extend(more);
        }
    }

    #[test]
    fn a_subtree_goes_whole_and_is_told_from_below_whatever_ids_its_nodes_have() {
        let mut seed = 0x2545_f491_u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % n
        };
        for ids_reused in [false, true] {
            let (mut list, mut parents) = (NodeList::default(), BTreeMap::new());
            let mut fresh = 1u64;
            for step in 0..3000 {
                if next(3) > 0 || parents.is_empty() {
                    // Fresh ids ascend; once they are handed out again, any free one.
                    #[allow(clippy::cast_possible_truncation)]
                    let id = match ids_reused && step > 500 {
                        true => 1 + next(fresh) as u32,
                        false => {
                            fresh += 1;
                            fresh as u32
                        }
                    };
                    if parents.contains_key(&id) {
                        continue;
                    }
                    let listed: Vec<u32> = parents.keys().copied().collect();
                    let parent = match next(2) {
                        0 if !listed.is_empty() => listed[next(listed.len() as u64) as usize],
                        _ => 0,
                    };
                    parents.insert(id, parent);
                    list.insert(ClientNode::new(
                        id,
                        NodeId::new(id, 0),
                        PeerId::SERVER,
                        parent,
                    ));
                } else {
                    let listed: Vec<u32> = parents.keys().copied().collect();
                    let id = listed[next(listed.len() as u64) as usize];
                    let expected = subtree(&parents, id);
                    for _ in 0..8 {
                        let other = listed[next(listed.len() as u64) as usize];
                        let under = expected.contains(&other);
                        assert_eq!(list.is_under(other, id), under, "step {step}");
                    }
                    let mut forgotten = Vec::new();
                    list.remove_subtree(id, |n| forgotten.push(n.net_id));
                    forgotten.sort_unstable();
                    assert_eq!(list.removed(), &expected[..], "step {step}");
                    assert_eq!(forgotten, expected, "step {step}");
                    for gone in &expected {
                        parents.remove(gone);
                        assert!(list.locate(*gone).is_none());
                    }
                }
                let listed: Vec<u32> = list.iter().map(|n| n.net_id).collect();
                assert_eq!(listed, parents.keys().copied().collect::<Vec<_>>());
            }
            assert_eq!(list.inverted > 0, ids_reused, "reused ids were exercised");
        }
    }
}

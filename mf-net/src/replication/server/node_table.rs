//! The server's records of its networked nodes and spawn groups, in stable slots
//! ([`SlotTable`]), and the capture pass that finds the nodes changed on a tick.

use std::cell::Cell;

use crate::cache_hint::prefetch_ref;
use crate::replication::server::shadow_column::{Changed, LastChanged};
use crate::replication::server::shadows::Shadows;
use crate::replication::server::slot_table::{Key, SlotTable};
use crate::replication::shared::columns::ValueAt;
use crate::replication::shared::protocol::{ParentRef, SpawnerPayload, TypedNode};
use crate::replication::Audience;
use crate::scene::NodeId;
use crate::store::{Link, Store};
use crate::tick::tick_after;
use crate::transport::PeerId;

/// Names a networked node in the server's node table (slot and net id).
pub(crate) type NodeKey = Key<NetNode>;
/// Names a spawn group in the server's group table (slot and first net id).
pub(crate) type GroupKey = Key<Group>;
/// The server's networked nodes, by net id.
pub(crate) type NodeTable = SlotTable<NetNode>;
/// The server's flushed spawn groups, by first net id.
pub(crate) type GroupTable = SlotTable<Group>;

/// The bit of [`NetNode::ty`] that marks a type without members (type numbers stay below it:
/// see [`ReplicationRegistry::MAX_TYPES`](crate::replication::ReplicationRegistry::MAX_TYPES)).
pub(crate) const STILL: u16 = 0x8000;

/// A networked node on the server.
pub(crate) struct NetNode {
    pub(crate) net_id: u32,
    pub(crate) node: NodeId,
    /// Whether what a client receives of it depends on whether it owns the node.
    pub(crate) owner_conditions: bool,
    /// Its value's replicated type, as bit-packed entries name it (its
    /// [`ReplicatedTypeId`](crate::replication::ReplicatedTypeId) number), once the value has
    /// a shadow state in its column; 0 without one (an instance root that holds no value).
    /// With [`STILL`] set for a type without members (see [`carries_state`](Self::carries_state)).
    pub(crate) ty: u16,
    /// The shadow state's newest change ticks for the node's owner and for other clients (0
    /// without a state), copied here by capture so that a snapshot skips nodes with nothing to
    /// send, and finds which entries are the same bytes, without touching their column.
    pub(crate) last_changed: LastChanged,
    /// Where its value was last seen in the scene (a hint that snapshots check).
    pub(crate) value_at: ValueAt,
    pub(crate) authority: PeerId,
    /// The nearest networked ancestor when the node was spawned (0: none).
    pub(crate) net_parent: u32,
    /// The spawn group it was spawned in (which may be gone while the node lives on, moved out
    /// of the group's subtree: check it against the group table).
    pub(crate) group: GroupKey,
    /// Whether its last snapshot entry was refused for holding a string no client accepts
    /// (set and cleared by the snapshot writer, which sees the table shared).
    pub(crate) over_limit: Cell<bool>,
}

/// What a vacant slot of the node table holds (no node's record: its id is 0).
impl Default for NetNode {
    fn default() -> Self {
        Self {
            net_id: 0,
            node: NodeId::new(0, 0),
            owner_conditions: false,
            ty: 0,
            last_changed: LastChanged::default(),
            value_at: ValueAt::default(),
            authority: PeerId::SERVER,
            net_parent: 0,
            group: GroupKey::new(0, 0),
            over_limit: Cell::new(false),
        }
    }
}

impl NetNode {
    /// Whether the node's value has a shadow state in its column.
    #[inline]
    pub(crate) fn has_state(&self) -> bool {
        self.ty != 0
    }

    /// Whether snapshots carry the node's state: it has one, with members that can change. A
    /// state without members (an engine's node of an object, such as mf-net-bevy's entity
    /// node) travels with the spawn and never changes.
    #[inline]
    pub(crate) fn carries_state(&self) -> bool {
        self.ty != 0 && self.ty & STILL == 0
    }

    /// Its value's type number (see [`ty`](Self::ty)).
    #[inline]
    pub(crate) fn type_number(&self) -> u16 {
        self.ty & !STILL
    }

    /// The newest tick stamped on a member a snapshot for `audience` carries.
    #[inline]
    pub(crate) fn last_changed_for(&self, audience: Audience) -> u32 {
        let [owner, others] = self.last_changed.last;
        match audience {
            Audience::Owner => owner,
            Audience::NonOwner => others,
            Audience::All => crate::tick::tick_max(owner, others),
        }
    }

    /// The `since` an entry for `audience` written with `since` shares its bytes with: entries
    /// written with any `since` from the newest change before the last
    /// ([`Capture::changed_before`](crate::replication::Capture::changed_before)) up to before
    /// the last select the same members, and are written with the oldest of them (with the
    /// tick before the last when every member changed then). Clients that acknowledged
    /// different ticks since the members they receive last changed then share one entry.
    #[inline]
    pub(crate) fn since_class(&self, since: Option<u32>, audience: Audience) -> Option<u32> {
        let slot = match audience {
            Audience::Owner => 0,
            Audience::NonOwner => 1,
            Audience::All => return since,
        };
        let (last, gap) = (self.last_changed.last[slot], self.last_changed.gap[slot]);
        since_class(since, last, gap)
    }

    /// The audience a snapshot for `peer` writes this node for.
    #[inline]
    pub(crate) fn audience_of(&self, peer: PeerId) -> Audience {
        Audience::of(self.authority == peer)
    }
}

/// [`NetNode::since_class`] of `since` for an audience whose newest change is `last`, and
/// whose newest change before it is `gap` ticks earlier (0: none; a gap the record capped
/// groups only the `since`s within it).
#[inline]
pub(crate) fn since_class(since: Option<u32>, last: u32, gap: u16) -> Option<u32> {
    let before = (gap != 0).then(|| last.wrapping_sub(u32::from(gap)));
    match (since, before) {
        (Some(s), _) if !tick_after(last, s) => Some(s),
        (Some(s), Some(b)) if tick_after(b, s) => Some(s),
        (Some(_), Some(b)) => Some(b),
        (Some(_), None) => Some(last.wrapping_sub(1)),
        (None, _) => None,
    }
}

/// A spawned (or bound) instance, kept for late joiners.
///
/// Laid out in declaration order (`repr(C)`): what only a spawn reads (but for the parent,
/// which interest reads too) first, what interest reads at every question last. A
/// [`GroupTable`] slot keeps its id after the group, and spans three or four lines, every one
/// of which [`prefetch_group`] asks for.
#[derive(Debug, Clone)]
#[repr(C)]
pub(crate) struct Group {
    /// The parent its spawn names.
    pub(crate) parent: ParentRef,
    /// The net id of the nearest networked node up from its root (its parent if networked, or
    /// the networked node a plain parent is inside of; 0: none): the group goes with that
    /// node's group (relevance, despawn). Its root node's net parent, kept here too so that a
    /// relevance question reads no node record.
    pub(crate) up: u32,
    pub(crate) name: String,
    /// A spawner spawn's spawner and data (scene index −2), kept for late joiners.
    pub(crate) spawner: Option<SpawnerPayload>,
    /// A typed spawn's nodes: each one's type, by its schema hash, and place (none for other
    /// kinds).
    pub(crate) typed: Vec<TypedNode>,
    pub(crate) authority: PeerId,
    pub(crate) scene: i32,
    /// Whether a client has (or had) authority over one of its nodes (if not, no client owns
    /// any, and interest need not look).
    pub(crate) client_owned: bool,
    /// A group of one node, while that node is in the node table: its key, which
    /// [`group_keys`] gives without a search (players, projectiles and pickups are groups of
    /// one, and interest asks for their keys at every change of relevance).
    pub(crate) single: Option<NodeKey>,
    pub(crate) first: u32,
    pub(crate) count: u32,
    pub(crate) root: NodeId,
}

impl Group {
    /// Whether its root is another value of its parent's object (see
    /// [`Store::beside_parent`]): it goes as its parent goes.
    pub(crate) fn beside_parent(&self) -> bool {
        let root = self.typed.first();
        root.is_some_and(|r| matches!(r.link, Link::Beside(_)))
    }
}

/// What a vacant slot of the group table holds (no group's record: its id is 0).
impl Default for Group {
    fn default() -> Self {
        Self {
            parent: ParentRef::Net(0),
            up: 0,
            name: String::new(),
            spawner: None,
            typed: Vec::new(),
            authority: PeerId::SERVER,
            scene: 0,
            client_owned: false,
            single: None,
            first: 0,
            count: 0,
            root: NodeId::new(0, 0),
        }
    }
}

/// Asks for every line of group `g`'s slot in `groups` (see [`crate::cache_hint`]): its start,
/// two fields between and its id (which ends it), no two more than a line apart, so that none
/// of the lines it spans is left out, wherever the slot starts in a line.
pub(crate) fn prefetch_group(groups: &GroupTable, g: GroupKey) {
    groups.prefetch_with(g, |group| {
        prefetch_ref(&group.spawner);
        prefetch_ref(&group.authority);
    });
}

impl Group {
    /// One past its last net id.
    #[inline]
    pub(crate) fn end(&self) -> u32 {
        self.first.saturating_add(self.count)
    }

    /// Whether `net_id` is one of its ids.
    #[inline]
    pub(crate) fn holds(&self, net_id: u32) -> bool {
        net_id >= self.first && net_id < self.end()
    }
}

/// The keys of `group`'s nodes that are still in `nodes`, in net id order.
pub(crate) fn group_keys<'a>(nodes: &'a NodeTable, group: &'a Group) -> &'a [NodeKey] {
    match &group.single {
        Some(key) => {
            debug_assert_eq!(nodes.keys_in(group.first, group.end()), [*key]);
            std::slice::from_ref(key)
        }
        None => nodes.keys_in(group.first, group.end()),
    }
}

/// The records of `group`'s nodes that are still in `nodes`, in net id order.
pub(crate) fn group_nodes<'a>(
    nodes: &'a NodeTable,
    group: &'a Group,
) -> impl Iterator<Item = &'a NetNode> + Clone + 'a {
    group_keys(nodes, group)
        .iter()
        .filter_map(move |&key| nodes.get(key))
}

/// The key of the group holding `net_id`.
pub(crate) fn group_of(groups: &GroupTable, net_id: u32) -> Option<GroupKey> {
    let key = groups.last_at_most(net_id)?;
    groups.get(key)?.holds(net_id).then_some(key)
}

/// Captures every networked value in `store` into its shadow state (one pass per type),
/// stamping changes with `tick`, and replaces `changed` with the keys of the nodes whose state
/// changed, in net id order (what the tick's snapshots start from: a node that did not change
/// has nothing new to send). A state that names one of `renamed` (sorted) counts as changed in
/// every member. A row's tag is its node's slot; `rows` is scratch, left holding the changed
/// rows. Returns where in `rows` those of the states naming one of `renamed` start.
#[allow(clippy::too_many_arguments)]
pub(crate) fn capture(
    nodes: &mut NodeTable,
    shadows: &mut Shadows,
    store: &mut dyn Store,
    tick: u32,
    renamed: &[NodeId],
    changed: &mut Vec<NodeKey>,
    rows: &mut Vec<Changed>,
) -> usize {
    changed.clear();
    rows.clear();
    shadows.capture(store, tick, rows);
    let captured = rows.len();
    if !renamed.is_empty() {
        shadows.restamp_naming(store, tick, renamed, rows);
    }
    for row in rows.iter() {
        let Some(key) = nodes.key_at_slot(row.tag as usize) else {
            continue;
        };
        if let Some(n) = nodes.get_mut(key) {
            n.last_changed = row.last_changed;
            n.value_at = row.at;
            changed.push(key);
        }
    }
    // Columns are walked type by type; within one type rows are mostly in spawn (net id)
    // order already, which the sort finds in one pass.
    changed.sort_unstable_by_key(|key| key.id());
    if !renamed.is_empty() {
        changed.dedup();
    }
    captured
}

#[cfg(test)]
mod tests {
    use super::since_class;

    #[test]
    fn entries_since_the_change_before_the_last_share_one_since() {
        // Members changed at 3 and at 6: since 3 to 5, one entry; before 3, its own.
        for s in 3..6 {
            assert_eq!(since_class(Some(s), 6, 3), Some(3));
        }
        assert_eq!(since_class(Some(2), 6, 3), Some(2));
        // Nothing to send (at or after the last change), or a resync: as it is.
        assert_eq!(since_class(Some(6), 6, 3), Some(6));
        assert_eq!(since_class(None, 6, 3), None);
        // Every member changed at the last change: any since before it, one entry.
        assert_eq!(since_class(Some(0), 6, 0), Some(5));
        // A change further back than a gap holds: only the since values within the gap.
        assert_eq!(
            since_class(Some(10_000), 70_000, u16::MAX),
            Some(70_000 - 65_535)
        );
        assert_eq!(since_class(Some(4000), 70_000, u16::MAX), Some(4000));
        // Across the wrap.
        assert_eq!(since_class(Some(u32::MAX), 2, 6), Some(u32::MAX - 3));
    }

    #[test]
    fn a_node_slot_fits_a_cache_line() {
        use super::NetNode;
        use std::mem::size_of;
        // A slot is the record, then its id: a snapshot's walk reads one line a node (it was
        // 72 bytes, two lines for most slots, with the type number beside the state flag).
        assert!(
            size_of::<NetNode>() + size_of::<u32>() <= 64,
            "{}",
            size_of::<NetNode>()
        );
    }

    #[test]
    fn a_group_slot_is_asked_for_at_most_a_line_apart_from_its_start_to_its_id() {
        use super::Group;
        use std::mem::{offset_of, size_of};
        // A slot is the group, then its id (`repr(C)`), at the group's size.
        let asked = [
            0,
            offset_of!(Group, spawner),
            offset_of!(Group, authority),
            size_of::<Group>(),
        ];
        assert!(asked.windows(2).all(|w| w[1] - w[0] <= 64), "{asked:?}");
    }
}

//! Interest from components: [`NetGrid`] places each group by where its root entity is in the
//! world (its `Transform` composed with its ancestors', for an entity with a [`NetTransform`]),
//! and a client's focus is the entity it owns that carries [`NetFocus`](crate::NetFocus),
//! placed the same way.

use std::any::Any;

use bevy_ecs::hierarchy::ChildOf;
use bevy_ecs::world::{EntityRef, World};
use bevy_math::Vec3;
use bevy_transform::components::Transform;
use mf_net::replication::interest::{Cell, GridInterest, InterestPolicy, InterestQuery, Relevance};
use mf_net::store::{NodeId, Store};

use crate::node::{entity_of, networked_node};
use crate::store::BevyStore;
use crate::store::NetMultiplayer;
use crate::transform::NetTransform;

/// [`GridInterest`] over a Bevy world: a group's position is its root entity's place in the
/// world, its `Transform` composed with its ancestors' (a networked child's `Transform` is
/// local to its parent; an ancestor without one counts as no offset), and so is the focus's
/// (which may be a child too: a player seated in a vehicle). Only an entity with a
/// [`NetTransform`] is placed: a root without one is always relevant, and a client whose focus
/// has none gets no placed group. Hysteresis, grace and distance tiers mean what they mean for
/// `GridInterest` (whose `position` is not used). Set it with `world.net(|mp|
/// mp.set_interest_policy(NetGrid(grid), every_ticks))`.
#[derive(Debug, Clone, Copy)]
pub struct NetGrid(pub GridInterest);

/// How many ancestors [`in_world`] composes at most: a deeper hierarchy (or a malformed one
/// that loops) is cut there.
const MAX_DEPTH: usize = 64;

/// The position of `node`'s entity in the world, if it has a [`NetTransform`].
fn position(query: &InterestQuery<'_>, node: NodeId) -> Option<[f32; 3]> {
    position_in(query.store, node)
}

/// The position in the world of `node`'s entity in `store`, if it has a [`NetTransform`]: its
/// `Transform`'s translation (the `NetTransform`'s, should the `Transform` be gone) carried up
/// through its ancestors' `Transform`s.
fn position_in(store: &dyn Store, node: NodeId) -> Option<[f32; 3]> {
    let store: &dyn Any = store;
    let world = store.downcast_ref::<BevyStore>()?.world();
    let entity = world.get_entity(entity_of(node)?).ok()?;
    let net = entity.get::<NetTransform>()?;
    let local = match entity.get::<Transform>() {
        Some(transform) => transform.translation,
        None => Vec3::from_array(net.translation.to_array()),
    };
    Some(in_world(world, entity, local).to_array())
}

/// `point`, given in `entity`'s parent's space, in the world's: through each ancestor's
/// `Transform` up the `ChildOf` links (an ancestor without one is no offset), at most
/// [`MAX_DEPTH`] of them.
fn in_world(world: &World, entity: EntityRef<'_>, mut point: Vec3) -> Vec3 {
    let mut up = entity.get::<ChildOf>().map(ChildOf::parent);
    for _ in 0..MAX_DEPTH {
        let Some(parent) = up.and_then(|e| world.get_entity(e).ok()) else {
            break;
        };
        if let Some(transform) = parent.get::<Transform>() {
            point = transform.transform_point(point);
        }
        up = parent.get::<ChildOf>().map(ChildOf::parent);
    }
    point
}

impl InterestPolicy for NetGrid {
    fn relevant(&mut self, query: &InterestQuery<'_>) -> bool {
        let Some(at) = position(query, query.group_root) else {
            return true;
        };
        let focus = query.focus.and_then(|focus| position(query, focus));
        focus.is_some_and(|focus| self.0.in_range(at, focus, query.visible))
    }

    fn grace(&self) -> std::time::Duration {
        self.0.grace
    }

    fn reach_cells(&self) -> Option<u32> {
        self.0.reach_cells()
    }

    fn distance_band(&self, cells: u64, visible: bool) -> Option<u32> {
        self.0.distance_band(cells, visible)
    }

    fn at_distance(&self, cells: u64, visible: bool) -> Option<Relevance> {
        self.0.at_distance(cells, visible)
    }

    fn cell_of(&mut self, store: &dyn Store, node: NodeId) -> Option<Cell> {
        position_in(store, node).map(|at| self.0.cell(at))
    }

    fn update_period(&mut self, query: &InterestQuery<'_>) -> u32 {
        let at = position(query, query.group_root);
        let focus = query.focus.and_then(|focus| position(query, focus));
        match (at, focus) {
            (Some(at), Some(focus)) => self.0.period_at(self.0.cell_distance(at, focus)),
            _ => 1,
        }
    }
}

/// The server makes each [`NetFocus`](crate::NetFocus) entity the focus of its owner's client,
/// when it is not already (a focus set is an interest evaluation, so it is set only on a
/// change; of two for one client, the one it has stays); and a client whose focus entity lost
/// `NetFocus`, went to another owner or is gone, and has no other, has none.
pub(crate) fn sync_focus(mp: &mut NetMultiplayer) {
    let store = mp.store_mut();
    let query = store
        .focus
        .get_or_insert_with(|| store.world.query_filtered());
    let mut wanted = std::mem::take(&mut store.to_focus);
    wanted.clear();
    wanted.extend(query.iter(&store.world).map(|(e, owner)| (owner.0, e)));
    // The foci no longer wanted go first (so that each client left holds a wanted one); their
    // clients lose them below unless they get another.
    let mut lost = Vec::new();
    let focused = &mut mp.store_mut().focused;
    focused.retain(|pair| {
        let keep = wanted.contains(pair);
        if !keep {
            lost.push(pair.0);
        }
        keep
    });
    for &(peer, entity) in &wanted {
        if mp.store().focused.iter().any(|&(p, _)| p == peer) {
            continue;
        }
        let entity_ref = mp.store().world().get_entity(entity).ok();
        let Some(node) = entity_ref.and_then(|e| networked_node(&e)) else {
            continue;
        };
        if mp.set_focus(peer, Some(node)).is_ok() {
            mp.store_mut().focused.push((peer, entity));
        }
    }
    for peer in lost {
        if !mp.store().focused.iter().any(|&(p, _)| p == peer) {
            let _ = mp.set_focus(peer, None);
        }
    }
    mp.store_mut().to_focus = wanted;
}

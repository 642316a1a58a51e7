//! Interest management: which spawn groups each client receives.
//!
//! A *spawn group* is what one spawn sends: an instance root with its networked descendants (a
//! [`spawn`](crate::replication::Multiplayer::spawn) or
//! [`spawn_with`](crate::replication::Multiplayer::spawn_with)), or a bound node with its
//! networked descendants ([`bind`](crate::replication::Multiplayer::bind)). Relevance is
//! decided per client and per group, on the server, in this order:
//!
//! 1. a group nested under a networked node of another group is relevant only while that group
//!    is (its client-side parent must exist);
//! 2. a group with a node the client has authority over is always relevant to it;
//! 3. a manual setting ([`Multiplayer::set_relevant`](crate::replication::Multiplayer::set_relevant))
//!    wins over the policy, and takes effect at the end of the frame, without grace;
//! 4. otherwise the [`InterestPolicy`]; without a policy, every group is relevant to every
//!    client (the default).
//!
//! The policy is asked when a group is spawned (for every client), when a client joins or its
//! focus is set (for that client), and at each client's turn: every `every_ticks` network ticks
//! ([`set_interest_policy`](crate::replication::Multiplayer::set_interest_policy)), the
//! clients' turns spread over the ticks so that no tick evaluates them all.
//!
//! A relevant group may also get an *update period* ([`InterestPolicy::update_period`]): its
//! nodes then go into that client's snapshots only every `period` network ticks (on ticks
//! spread by the group's net id, so far groups do not all land on the same tick), while near
//! ones go every tick. Acknowledgements stay per node, so a skipped tick only delays changes:
//! an entry still carries everything since the node's acknowledged tick. Groups relevant for
//! any other reason (owned, manual, no policy) go every tick.
//!
//! [`GridInterest`] is the built-in spatial policy: a uniform grid on the XZ plane with
//! hysteresis, a grace period before a group that left the range is despawned, and optional
//! distance tiers of update periods.
//!
//! # The spatial index
//!
//! Without more, a client's turn asks about every group. A policy over a grid of cells tells
//! the server its [`reach_cells`](InterestPolicy::reach_cells) and each node's
//! [`cell_of`](InterestPolicy::cell_of) (and, if its answers depend only on the distance
//! between cells, its [`distance_band`](InterestPolicy::distance_band)); the server then keeps
//! the groups by cell, logs the groups that change cell, and at a client's turn asks only about
//! the groups that changed cell near it or that it has, those whose distance band changed if
//! its focus changed cell, and the groups without a cell or in their grace period. A new spawn
//! asks only the clients within reach. [`GridInterest`] provides all three. What a turn costs
//! is then what moved near the client, not the size of the world. A policy whose answers
//! themselves follow from that distance can also give them by distance
//! ([`at_distance`](InterestPolicy::at_distance)): a turn then decides the groups it asks about
//! from the cells the index keeps, without asking the policy or reading a position.
//!
//! The index reads a group's cell again at each tick after a capture that changed one of its
//! nodes, and the cells of the groups nested under it (at any depth) with it: their positions
//! may be relative to it, as a child instance's under a moving parent, and change without a
//! change of their own. A slow sweep over every group (all of them every `every_ticks` ticks)
//! catches a position that changes otherwise (one read from outside the group's nodes).

use std::time::Duration;

use crate::replication::shared::instance::as_scene;
use crate::scene::{NodeId, Scene};
use crate::store::Store;
use crate::transport::PeerId;

/// What an [`InterestPolicy`] is asked about: one group and one client.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct InterestQuery<'a> {
    /// The server's storage (see [`scene`](Self::scene) for the built-in scene).
    pub store: &'a dyn Store,
    /// The group's root (instance root or bound node).
    pub group_root: NodeId,
    /// The client.
    pub peer: PeerId,
    /// The client's focus node ([`set_focus`](crate::replication::Multiplayer::set_focus)),
    /// usually its player.
    pub focus: Option<NodeId>,
    /// Whether the client currently has the group (for hysteresis). A group in its grace
    /// period still counts as visible.
    pub visible: bool,
    /// The server's passed-in time.
    pub now: Duration,
}

impl std::fmt::Debug for InterestQuery<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InterestQuery")
            .field("group_root", &self.group_root)
            .field("peer", &self.peer)
            .field("focus", &self.focus)
            .field("visible", &self.visible)
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl<'a> InterestQuery<'a> {
    /// The server's storage as the built-in scene, if it is one.
    pub fn scene(&self) -> Option<&'a Scene> {
        as_scene(self.store)
    }
}

/// Decides whether a group is relevant to a client (see the [module documentation](self)).
/// Implemented by [`GridInterest`] and by every `FnMut(&InterestQuery<'_>) -> bool`.
pub trait InterestPolicy {
    /// Whether the group of `query.group_root` should be on `query.peer`'s client. Called for
    /// many clients and groups each tick (with a [spatial index](self#the-spatial-index), for
    /// those that may have changed; else for every group at each client's turn): it should not
    /// allocate.
    fn relevant(&mut self, query: &InterestQuery<'_>) -> bool;

    /// How long a visible group must stay irrelevant, without interruption, before it is
    /// despawned on the client (zero, the default: at once). Measured between evaluations,
    /// so it is rounded up to the evaluation interval.
    fn grace(&self) -> Duration {
        Duration::ZERO
    }

    /// For a group [`relevant`](Self::relevant) just found relevant (same query), how often its
    /// nodes go into the client's snapshots, in network ticks: 1 (the default) every tick, `n`
    /// every `n`th (0 reads as 1). A change applies from the evaluation that returns it. Called
    /// as often as `relevant`: it should not allocate.
    fn update_period(&mut self, query: &InterestQuery<'_>) -> u32 {
        let _ = query;
        1
    }

    /// For a policy over a grid of cells, how far (in cells, Chebyshev distance) a group may be
    /// from a client's focus and still be relevant to it; `None` (the default) for a policy
    /// without cells. With `Some`, the server keeps a [spatial index](self#the-spatial-index)
    /// and asks [`relevant`](Self::relevant) only what may have changed, which holds the policy
    /// to this contract:
    ///
    /// - a group whose root has a cell ([`cell_of`](Self::cell_of)) is not relevant to a client
    ///   whose focus has no cell, nor to one whose focus's cell is more than `reach_cells` away;
    /// - for a group and a client, `relevant` and `update_period` answer the same as long as
    ///   the group's cell, the focus's cell and `visible` stay the same (a group in its grace
    ///   period, and a group without a cell, are asked again at every evaluation);
    /// - anything else the answers depend on changing: call
    ///   [`Multiplayer::refresh_interest`](crate::replication::Multiplayer::refresh_interest).
    fn reach_cells(&self) -> Option<u32> {
        None
    }

    /// With [`reach_cells`](Self::reach_cells), for a policy whose answers for a group and a
    /// client depend on their cells only through the Chebyshev distance between them: the band
    /// `cells` falls in for a group the client has (`visible`) or not, a number that stays the
    /// same over every distance for which the answers do (for [`GridInterest`]: a group the
    /// client does not have has bands that break after its radius, where it may enter; one it
    /// has, after its radius plus hysteresis, where it may leave, and after each tier's
    /// radius). The server then asks, when a focus or a group changes cell, only about the
    /// groups whose band changed. `None` (the default): every group near the old or the new
    /// cell is asked.
    fn distance_band(&self, cells: u64, visible: bool) -> Option<u32> {
        let _ = (cells, visible);
        None
    }

    /// With [`reach_cells`](Self::reach_cells): what [`relevant`](Self::relevant) and
    /// [`update_period`](Self::update_period) answer for a group whose cell is `cells` away from
    /// the focus's cell (Chebyshev distance), which the client has (`visible`) or not, if the
    /// policy's answers follow from that distance alone. A client's evaluation then decides each
    /// group the index holds in a cell from the cells it keeps (the group's as of the last
    /// capture, the focus's as of this evaluation), without asking those two or reading
    /// positions; other questions (a new spawn, a join, a group without a cell) still ask them.
    /// `None` (the default): always asked.
    fn at_distance(&self, cells: u64, visible: bool) -> Option<Relevance> {
        let _ = (cells, visible);
        None
    }

    /// With [`reach_cells`](Self::reach_cells): the cell of `node` in `store` (a group root or
    /// a focus), or `None` for a node without a place. Called for each group whose nodes
    /// changed since the last evaluation, a slice of the others each tick, and each client's
    /// focus at its evaluation: it should not allocate.
    fn cell_of(&mut self, store: &dyn Store, node: NodeId) -> Option<Cell> {
        let _ = (store, node);
        None
    }
}

/// What a policy answers for a group at a cell distance ([`InterestPolicy::at_distance`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relevance {
    /// Relevant, its nodes going into the client's snapshots every `period` network ticks (0
    /// reads as 1; see [`InterestPolicy::update_period`]).
    Relevant {
        /// The update period, in network ticks.
        period: u32,
    },
    /// Not relevant.
    Irrelevant,
}

/// A cell of a policy's grid (see [`InterestPolicy::reach_cells`]): two integer coordinates
/// (for [`GridInterest`], on the XZ plane).
pub type Cell = (i64, i64);

impl<F: FnMut(&InterestQuery<'_>) -> bool> InterestPolicy for F {
    fn relevant(&mut self, query: &InterestQuery<'_>) -> bool {
        self(query)
    }
}

/// `q.floor() as i64` (saturating; a NaN is 0) without a call to the C library's `floorf`,
/// which the baseline x86-64 target makes of `f32::floor`: interest asks for two cells per
/// question.
#[inline]
fn floor(q: f32) -> i64 {
    // Towards zero, saturating; one less where that rounded a negative value up.
    #[allow(clippy::cast_possible_truncation)]
    let t = q as i64;
    #[allow(clippy::cast_precision_loss)]
    let up = t as f32 > q;
    match up {
        true => t.saturating_sub(1),
        false => t,
    }
}

/// A node's position for [`GridInterest`]: `None` for a node that has none.
pub type PositionFn = fn(&Scene, NodeId) -> Option<[f32; 3]>;

/// A uniform grid on the XZ plane: a group enters a client's interest when its root's cell is
/// within `radius_cells` (Chebyshev distance, in cells) of the cell of the client's focus, and
/// leaves only beyond `radius_cells + hysteresis_cells` (so a node hovering at the boundary does
/// not flap), and only after being out of range for `grace` (the client's copy goes stale
/// meanwhile). A group whose root has no position is always relevant (it cannot be placed); a
/// client without a focus (or whose focus has no position) gets no positioned group.
///
/// Positions are read from the built-in scene: with a storage of the game's own, every group
/// counts as unplaced (always relevant); write a policy over
/// [`InterestQuery::store`] instead, deciding with [`in_range`](Self::in_range) and
/// [`period_at`](Self::period_at) (mf-net-bevy's `NetGrid` does so for Bevy).
///
/// `tiers` gives relevant groups update periods by distance: `(radius_cells, every_n_ticks)`
/// entries in increasing radius; a group gets the period of the first entry whose radius covers
/// its cell distance, or of the last entry beyond them all; a group without a position, and
/// every group with no tiers (`&[]`, the default behaviour), goes every tick.
///
/// ```
/// # use std::time::Duration;
/// # use mf_net::replication::interest::GridInterest;
/// let grid = GridInterest {
///     cell_size: 50.0,
///     radius_cells: 6,
///     hysteresis_cells: 1,
///     grace: Duration::from_secs(2),
///     position: |_, _| None,
///     // Within 2 cells every tick, within 4 every 3rd tick, farther every 6th.
///     tiers: &[(2, 1), (4, 3), (u32::MAX, 6)],
/// };
/// assert_eq!(grid.period_at(3), 3);
/// assert_eq!(grid.period_at(9), 6);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct GridInterest {
    /// Cell edge length, in world units (above 0).
    pub cell_size: f32,
    /// Entering range, in cells.
    pub radius_cells: u32,
    /// Extra cells a visible group may move away before it counts as out of range.
    pub hysteresis_cells: u32,
    /// How long a visible group must be out of range before it is despawned.
    pub grace: Duration,
    /// A node's world position (only x and z are used).
    pub position: PositionFn,
    /// Update periods by distance: `(radius_cells, every_n_ticks)`, in increasing radius
    /// (empty: every tick).
    pub tiers: &'static [(u32, u32)],
}

impl GridInterest {
    /// The cell of a position.
    pub fn cell(&self, position: [f32; 3]) -> Cell {
        let size = if self.cell_size > 0.0 {
            self.cell_size
        } else {
            1.0
        };
        (floor(position[0] / size), floor(position[2] / size))
    }

    /// The Chebyshev distance in cells between two positions.
    pub fn cell_distance(&self, a: [f32; 3], b: [f32; 3]) -> u64 {
        let (ax, az) = self.cell(a);
        let (bx, bz) = self.cell(b);
        ax.abs_diff(bx).max(az.abs_diff(bz))
    }

    /// Whether a group at `at` is in range of a client's `focus`: within `radius_cells`, or,
    /// for a group the client has (`visible`), within `radius_cells + hysteresis_cells` (what
    /// [`relevant`](InterestPolicy::relevant) decides once both are placed; for a policy that
    /// reads positions from a storage of its own).
    pub fn in_range(&self, at: [f32; 3], focus: [f32; 3], visible: bool) -> bool {
        self.in_range_at(self.cell_distance(at, focus), visible)
    }

    /// Whether a group `cells` away from the focus is in range (see [`in_range`](Self::in_range)).
    fn in_range_at(&self, cells: u64, visible: bool) -> bool {
        let range = if visible {
            self.radius_cells.saturating_add(self.hysteresis_cells)
        } else {
            self.radius_cells
        };
        cells <= u64::from(range)
    }

    /// The update period (in network ticks, at least 1) of a group `cells` away from the focus,
    /// from `tiers`.
    pub fn period_at(&self, cells: u64) -> u32 {
        self.tiers
            .iter()
            .find(|&&(radius, _)| cells <= u64::from(radius))
            .or(self.tiers.last())
            .map_or(1, |&(_, period)| period.max(1))
    }
}

impl InterestPolicy for GridInterest {
    fn relevant(&mut self, query: &InterestQuery<'_>) -> bool {
        let Some(scene) = query.scene() else {
            return true;
        };
        let Some(at) = (self.position)(scene, query.group_root) else {
            return true;
        };
        let Some(focus) = query.focus.and_then(|focus| (self.position)(scene, focus)) else {
            return false;
        };
        self.in_range(at, focus, query.visible)
    }

    fn grace(&self) -> Duration {
        self.grace
    }

    fn reach_cells(&self) -> Option<u32> {
        Some(self.radius_cells.saturating_add(self.hysteresis_cells))
    }

    fn distance_band(&self, cells: u64, visible: bool) -> Option<u32> {
        let beyond = |radius: u32| u32::from(cells > u64::from(radius));
        if !visible {
            return Some(beyond(self.radius_cells));
        }
        let leave = beyond(self.radius_cells.saturating_add(self.hysteresis_cells));
        let tiers: u32 = self.tiers.iter().map(|&(radius, _)| beyond(radius)).sum();
        Some(leave + tiers)
    }

    fn at_distance(&self, cells: u64, visible: bool) -> Option<Relevance> {
        Some(match self.in_range_at(cells, visible) {
            true => Relevance::Relevant {
                period: self.period_at(cells),
            },
            false => Relevance::Irrelevant,
        })
    }

    fn cell_of(&mut self, store: &dyn Store, node: NodeId) -> Option<Cell> {
        let scene = as_scene(store)?;
        (self.position)(scene, node).map(|at| self.cell(at))
    }

    fn update_period(&mut self, query: &InterestQuery<'_>) -> u32 {
        if self.tiers.is_empty() {
            return 1;
        }
        let Some(scene) = query.scene() else {
            return 1;
        };
        let at = (self.position)(scene, query.group_root);
        let focus = query.focus.and_then(|focus| (self.position)(scene, focus));
        match (at, focus) {
            (Some(at), Some(focus)) => self.period_at(self.cell_distance(at, focus)),
            _ => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> GridInterest {
        GridInterest {
            cell_size: 10.0,
            radius_cells: 1,
            hysteresis_cells: 1,
            grace: Duration::ZERO,
            position: |_, _| None,
            tiers: &[],
        }
    }

    proptest::proptest! {
        #[test]
        fn a_cell_coordinate_is_the_floor_of_any_float(bits in proptest::prelude::any::<u32>()) {
            let q = f32::from_bits(bits);
            #[allow(clippy::cast_possible_truncation)]
            let expected = q.floor() as i64;
            proptest::prop_assert_eq!(floor(q), expected, "{}", q);
        }
    }

    #[test]
    fn a_cell_coordinate_is_the_floor_at_the_edges() {
        for q in [
            0.0,
            -0.0,
            -0.5,
            0.5,
            -1.0,
            -1.000_001,
            1.999_999,
            -8_388_609.0,
            9.223_372e18,
            -9.223_372e18,
            -1e30,
            1e30,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
        ] {
            #[allow(clippy::cast_possible_truncation)]
            let expected = q.floor() as i64;
            assert_eq!(floor(q), expected, "{q}");
        }
    }

    #[test]
    fn cells_floor_on_the_xz_plane() {
        let g = grid();
        assert_eq!(g.cell([-0.5, 99.0, 19.9]), (-1, 1));
        assert_eq!(g.cell_distance([0.0, 0.0, 0.0], [25.0, 0.0, -5.0]), 2);
    }

    #[test]
    fn distance_bands_break_where_a_group_may_enter_or_leave_or_change_tier() {
        let mut g = grid();
        g.radius_cells = 2;
        let bands = |g: &GridInterest, visible: bool| -> Vec<u32> {
            (0..7)
                .map(|d| g.distance_band(d, visible).unwrap())
                .collect()
        };
        // Not had: it may enter within 2 cells. Had: it may leave beyond 3.
        assert_eq!(bands(&g, false), [0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(bands(&g, true), [0, 0, 0, 0, 1, 1, 1]);
        g.tiers = &[(1, 1), (2, 3)];
        assert_eq!(bands(&g, true), [0, 0, 1, 2, 3, 3, 3]);
        assert_eq!(bands(&g, false), [0, 0, 0, 1, 1, 1, 1]);
    }

    /// A position read from the node's handle: x from its index, z from its generation (a
    /// tenth of a unit a step, centered on zero).
    #[allow(clippy::cast_precision_loss, clippy::unnecessary_wraps)]
    fn coded_position(_: &Scene, node: NodeId) -> Option<[f32; 3]> {
        let at = |v: u32| (f64::from(v) - 500.0) as f32 * 0.1;
        Some([at(node.index()), 0.0, at(node.generation())])
    }

    proptest::proptest! {
        #[test]
        fn answers_by_distance_are_those_of_the_positions(
            (gx, gz, fx, fz) in (0u32..1000, 0u32..1000, 0u32..1000, 0u32..1000),
            visible: bool,
            hysteresis in 0u32..3,
            tiered: bool,
        ) {
            let mut g = GridInterest {
                cell_size: 4.0,
                radius_cells: 3,
                hysteresis_cells: hysteresis,
                position: coded_position,
                tiers: if tiered { &[(1, 1), (4, 2), (u32::MAX, 5)] } else { &[] },
                ..grid()
            };
            let scene = Scene::new();
            let (root, focus) = (NodeId::new(gx, gz), NodeId::new(fx, fz));
            let query = InterestQuery {
                store: &scene,
                group_root: root,
                peer: PeerId(1),
                focus: Some(focus),
                visible,
                now: Duration::ZERO,
            };
            let position = |n| coded_position(&scene, n).unwrap();
            let cells = g.cell_distance(position(root), position(focus));
            let expected = match g.relevant(&query) {
                true => Relevance::Relevant { period: g.update_period(&query) },
                false => Relevance::Irrelevant,
            };
            proptest::prop_assert_eq!(g.at_distance(cells, visible), Some(expected));
        }
    }

    #[test]
    fn tiers_pick_the_first_covering_radius_or_the_last() {
        let mut g = grid();
        assert_eq!(g.period_at(100), 1, "no tiers: every tick");
        g.tiers = &[(1, 1), (3, 2), (5, 6)];
        let periods: Vec<u32> = (0..8).map(|d| g.period_at(d)).collect();
        assert_eq!(periods, [1, 1, 2, 2, 6, 6, 6, 6]);
        g.tiers = &[(4, 0)];
        assert_eq!((g.period_at(0), g.period_at(9)), (1, 1), "0 reads as 1");
    }
}

//! Spawnable scenes registered by name, and their replication fingerprint.

use std::fmt;

use super::{NodeId, Scene, SceneError};
use crate::schema;

/// A spawnable scene's number in a [`SceneLibrary`]: its registration order, from 0. Both ends
/// register the same scenes in the same order, so indices can go on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SceneIndex(u16);

impl SceneIndex {
    /// The index for `index` (whether a scene is registered there is checked on use).
    pub const fn new(index: u16) -> Self {
        Self(index)
    }

    /// The raw index.
    pub const fn get(self) -> u16 {
        self.0
    }
}

/// What a spawnable scene builds under its instance root.
type Builder = Box<dyn Fn(&mut Scene, NodeId) -> Result<(), SceneError>>;

struct Entry {
    name: String,
    builder: Builder,
}

/// The spawnable scenes, registered by name: each is a builder closure run identically on the
/// server and on clients, so a spawned instance's networked nodes come out in the same
/// depth-first order (and take the same consecutive network ids) on every peer.
///
/// ```
/// use mf_net::prelude::*;
/// use mf_net::scene::{Scene, SceneLibrary};
///
/// #[derive(Replicated, Default)]
/// struct Body {
///     #[replicated]
///     x: i32,
/// }
///
/// # fn main() -> Result<(), mf_net::scene::SceneError> {
/// let mut library = SceneLibrary::new();
/// let player = library.register("player", |scene, root| {
///     scene.set_value(root, Body::default())?;
///     scene.insert(root, "weapon", Body::default())?;
///     Ok(())
/// })?;
/// let mut scene = Scene::new();
/// let root = scene.root();
/// let instance = library.instantiate(player, &mut scene, root, "p1")?;
/// assert_eq!(scene.networked_depth_first(instance).count(), 2);
/// assert_eq!(library.shapes()?[0].types.len(), 2);
/// # Ok(())
/// # }
/// ```
#[derive(Default)]
pub struct SceneLibrary {
    entries: Vec<Entry>,
}

impl fmt::Debug for SceneLibrary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| &e.name))
            .finish()
    }
}

impl SceneLibrary {
    /// An empty library.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a spawnable scene. `builder` receives the scene and the instance root (already
    /// added under the spawn parent, holding no value) and builds the rest; it must do the same
    /// thing every time, on every peer. Whatever it returns on success is dropped, so a
    /// builder can end with the last scene call (`scene.set_value(root, Player::default())`).
    /// Returns the scene's index (registration order): keep it to spawn the scene.
    ///
    /// # Errors
    ///
    /// [`SceneError::DuplicateScene`] if `name` is taken, [`SceneError::TooManyScenes`] past
    /// `u16::MAX + 1` scenes.
    pub fn register<F, R>(&mut self, name: &str, builder: F) -> Result<SceneIndex, SceneError>
    where
        F: Fn(&mut Scene, NodeId) -> Result<R, SceneError> + 'static,
    {
        let builder = move |scene: &mut Scene, root: NodeId| builder(scene, root).map(drop);
        if self.index_of(name).is_some() {
            return Err(SceneError::DuplicateScene(name.to_owned()));
        }
        let index = u16::try_from(self.entries.len()).map_err(|_| SceneError::TooManyScenes)?;
        self.entries.push(Entry {
            name: name.to_owned(),
            builder: Box::new(builder),
        });
        Ok(SceneIndex(index))
    }

    /// How many scenes are registered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no scene is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The index of the scene registered as `name`.
    pub fn index_of(&self, name: &str) -> Option<SceneIndex> {
        let index = self.entries.iter().position(|e| e.name == name)?;
        u16::try_from(index).ok().map(SceneIndex)
    }

    /// The name of the scene at `index`.
    pub fn name(&self, index: SceneIndex) -> Option<&str> {
        Some(self.entries.get(usize::from(index.0))?.name.as_str())
    }

    /// Every registered scene, in index order.
    pub fn iter(&self) -> impl Iterator<Item = (SceneIndex, &str)> + '_ {
        (0..=u16::MAX)
            .zip(&self.entries)
            .map(|(index, e)| (SceneIndex(index), e.name.as_str()))
    }

    /// Adds an instance of the scene at `index` under `parent`, named `name`, and runs its
    /// builder on it. Returns the instance root. If the builder fails, the partly built instance
    /// is removed again.
    ///
    /// # Errors
    ///
    /// [`SceneError::UnknownScene`], the errors of [`Scene::add`] for the instance root, and
    /// whatever the builder returns.
    pub fn instantiate(
        &self,
        index: SceneIndex,
        scene: &mut Scene,
        parent: NodeId,
        name: &str,
    ) -> Result<NodeId, SceneError> {
        let entry = self
            .entries
            .get(usize::from(index.0))
            .ok_or(SceneError::UnknownScene(index))?;
        let root = scene.add(parent, name)?;
        if let Err(error) = (entry.builder)(scene, root) {
            scene.remove(root);
            return Err(error);
        }
        Ok(root)
    }

    /// Every scene's shape: its name and the stable type names and schema hashes of its
    /// networked nodes (those holding a value, the instance root included) in depth-first
    /// order, computed by instantiating each scene once into a scratch [`Scene`]. Compare two
    /// peers' shapes with [`first_difference`].
    ///
    /// # Errors
    ///
    /// Whatever a builder returns.
    pub fn shapes(&self) -> Result<Vec<SceneShape>, SceneError> {
        let mut shapes = Vec::with_capacity(self.entries.len());
        for (index, name) in self.iter() {
            let mut scratch = Scene::new();
            let root = scratch.root();
            let instance = self.instantiate(index, &mut scratch, root, "instance")?;
            let types = scratch
                .networked_depth_first(instance)
                .filter_map(|node| scratch.value_info(node))
                .map(|ty| (ty.name(), ty.schema_hash()))
                .collect();
            shapes.push(SceneShape {
                name: name.to_owned(),
                types,
            });
        }
        Ok(shapes)
    }

    /// A hash of [`shapes`](Self::shapes) (see [`SceneShape::fingerprint`]): equal on two peers
    /// that register the same scenes, in the same order, building the same networked nodes.
    ///
    /// # Errors
    ///
    /// Whatever a builder returns.
    pub fn fingerprint(&self) -> Result<u64, SceneError> {
        Ok(SceneShape::fingerprint(&self.shapes()?))
    }
}

/// One spawnable scene as the replication handshake sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SceneShape {
    /// The name the scene was registered under.
    pub name: String,
    /// Stable type name and schema hash of each networked node, in depth-first order.
    pub types: Vec<(&'static str, u64)>,
}

impl SceneShape {
    /// A stable 64-bit hash of a list of shapes (scene count, then each scene's name, node
    /// count, and every node's type name and schema hash). Fold it to 32 bits with
    /// [`schema::fold32`] when needed.
    pub fn fingerprint(shapes: &[SceneShape]) -> u64 {
        let mut hash = schema::hash_name("mf_net::scene::SceneLibrary");
        hash = schema::hash_u64(hash, shapes.len() as u64);
        for shape in shapes {
            hash = schema::hash_str(hash, &shape.name);
            hash = schema::hash_u64(hash, shape.types.len() as u64);
            for &(name, schema_hash) in &shape.types {
                hash = schema::hash_str(hash, name);
                hash = schema::hash_u64(hash, schema_hash);
            }
        }
        hash
    }
}

/// Describes the first difference between two peers' scene shapes (`ours` and `theirs`), naming
/// the scene and, if the names agree, the first differing node type. `None` if they are equal.
pub fn first_difference(ours: &[SceneShape], theirs: &[SceneShape]) -> Option<String> {
    for (index, pair) in ours.iter().zip(theirs).enumerate() {
        let (a, b) = pair;
        if a.name != b.name {
            return Some(format!(
                "spawnable scene {index} is `{}` here but `{}` on the other side",
                a.name, b.name
            ));
        }
        for (node, (x, y)) in a.types.iter().zip(&b.types).enumerate() {
            if x != y {
                return Some(format!(
                    "scene `{}`, networked node {node}: type `{}` (schema {:#018x}) here but `{}` \
                     (schema {:#018x}) on the other side",
                    a.name, x.0, x.1, y.0, y.1
                ));
            }
        }
        if a.types.len() != b.types.len() {
            let (more, side) = if a.types.len() > b.types.len() {
                (a.types[b.types.len()].0, "only here")
            } else {
                (b.types[a.types.len()].0, "only on the other side")
            };
            return Some(format!(
                "scene `{}` has {} networked nodes here and {} on the other side (first extra: \
                 `{more}`, {side})",
                a.name,
                a.types.len(),
                b.types.len()
            ));
        }
    }
    if ours.len() != theirs.len() {
        let extra = ours
            .get(theirs.len())
            .or_else(|| theirs.get(ours.len()))
            .map_or("", |s| s.name.as_str());
        return Some(format!(
            "{} spawnable scenes here and {} on the other side (first extra: `{extra}`)",
            ours.len(),
            theirs.len()
        ));
    }
    None
}

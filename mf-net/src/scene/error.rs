//! [`SceneError`]: why a scene operation was refused.

use std::fmt;

#[cfg(doc)]
use super::Scene;
use super::{NodeId, SceneIndex};

/// Why a scene operation was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SceneError {
    /// The node (a parent, or the target of an operation) is not in the scene.
    NoSuchNode(NodeId),
    /// The parent already has a child with this name. Names are unique among siblings because
    /// peers bind nodes by parent path and name; nothing is renamed automatically.
    DuplicateName {
        /// The parent's path.
        parent: String,
        /// The name that is taken.
        name: String,
    },
    /// A node name must be non-empty and must not contain `/`.
    InvalidName(String),
    /// No scene is registered at this index.
    UnknownScene(SceneIndex),
    /// A spawnable scene with this name is already registered.
    DuplicateScene(String),
    /// More spawnable scenes than a [`SceneIndex`] can number.
    TooManyScenes,
    /// The root cannot be detached or moved.
    RootNode,
    /// [`Scene::attach`] needs a detached node; this one is in the tree or under another
    /// detached node (use [`Scene::reparent`] to move it).
    NotDetached(NodeId),
    /// A node cannot be moved under itself or one of its descendants.
    InsideItself {
        /// The node being moved.
        node: NodeId,
        /// The parent it was to go under.
        parent: NodeId,
    },
}

impl fmt::Display for SceneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSuchNode(id) => write!(f, "node {id} is not in the scene"),
            Self::DuplicateName { parent, name } => {
                write!(f, "`{parent}` already has a child named `{name}`")
            }
            Self::InvalidName(name) => {
                write!(
                    f,
                    "invalid node name `{name}`: it must be non-empty and contain no `/`"
                )
            }
            Self::UnknownScene(index) => write!(f, "no spawnable scene has index {}", index.get()),
            Self::DuplicateScene(name) => {
                write!(f, "a spawnable scene named `{name}` is already registered")
            }
            Self::TooManyScenes => write!(f, "too many spawnable scenes for a u16 index"),
            Self::RootNode => f.write_str("the root node cannot be detached or moved"),
            Self::NotDetached(node) => {
                write!(f, "node {node} is not detached; reparent it instead")
            }
            Self::InsideItself { node, parent } => {
                write!(
                    f,
                    "node {node} cannot go under {parent}, which is inside it"
                )
            }
        }
    }
}

impl std::error::Error for SceneError {}

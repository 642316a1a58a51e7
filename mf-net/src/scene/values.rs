//! The values of nodes: setting, clearing and reading them, typed or type-erased, and
//! iterating over every node holding a given type (and keeping [`Scene::retype_epoch`] up to
//! date).

use std::any::{Any, TypeId};

use super::{next_retype_epoch, NetRef, NodeId, NodeValue, Scene, SceneError};
use crate::replication::{RegisteredType, Replicated};

impl Scene {
    /// Adds a node named `name` under `parent` holding `value`, and returns its typed handle.
    ///
    /// # Errors
    ///
    /// As [`add`](Self::add).
    pub fn insert<T: Replicated>(
        &mut self,
        parent: NodeId,
        name: &str,
        value: T,
    ) -> Result<NetRef<T>, SceneError> {
        let node = self.add(parent, name)?;
        self.set_value(node, value)
    }

    /// Sets `node`'s value to `value`, replacing any previous value (of any type).
    ///
    /// A [`Multiplayer`](crate::replication::Multiplayer) server despawns (frees) a networked
    /// node whose value is replaced by one of another type, at the end of the frame: its
    /// clients built it with the old type and could not read the new one.
    ///
    /// # Errors
    ///
    /// [`SceneError::NoSuchNode`] if `node` is gone.
    pub fn set_value<T: Replicated>(
        &mut self,
        node: NodeId,
        value: T,
    ) -> Result<NetRef<T>, SceneError> {
        let slot = self.node_mut(node).ok_or(SceneError::NoSuchNode(node))?;
        let retyped = slot
            .value
            .as_ref()
            .is_some_and(|old| old.ty.type_id() != TypeId::of::<T>());
        slot.value = Some(NodeValue {
            value: Box::new(value),
            ty: RegisteredType::of::<T>(),
        });
        if retyped {
            self.retype_epoch = next_retype_epoch();
        }
        Ok(NetRef::new(node))
    }

    /// Removes `node`'s value, leaving the node in place. Returns whether it had one.
    ///
    /// A [`Multiplayer`](crate::replication::Multiplayer) server despawns (frees) a networked
    /// node whose value is cleared, at the end of the frame.
    pub fn clear_value(&mut self, node: NodeId) -> bool {
        let cleared = self
            .node_mut(node)
            .and_then(|node| node.value.take())
            .is_some();
        if cleared {
            self.retype_epoch = next_retype_epoch();
        }
        cleared
    }

    /// The typed handle of `node` if it holds a `T`.
    pub fn net_ref<T: Replicated>(&self, node: NodeId) -> Option<NetRef<T>> {
        (self.value_type(node)? == TypeId::of::<T>()).then(|| NetRef::new(node))
    }

    /// The value behind `handle`: `None` if the node is gone or no longer holds a `T`.
    pub fn get<T: Replicated>(&self, handle: NetRef<T>) -> Option<&T> {
        self.node(handle.node())?
            .value
            .as_ref()?
            .value
            .downcast_ref()
    }

    /// The value behind `handle`, mutably: `None` if the node is gone or no longer holds a `T`.
    pub fn get_mut<T: Replicated>(&mut self, handle: NetRef<T>) -> Option<&mut T> {
        self.node_mut(handle.node())?
            .value
            .as_mut()?
            .value
            .downcast_mut()
    }

    /// The [`TypeId`] of `node`'s value, if it has one.
    pub fn value_type(&self, node: NodeId) -> Option<TypeId> {
        Some(self.value_info(node)?.type_id())
    }

    /// The registry entry (stable name, schema hash, members) of `node`'s value's type.
    pub fn value_info(&self, node: NodeId) -> Option<&RegisteredType> {
        Some(&self.node(node)?.value.as_ref()?.ty)
    }

    /// `node`'s value, type-erased.
    pub fn value_any(&self, node: NodeId) -> Option<&dyn Any> {
        Some(self.node(node)?.value.as_ref()?.value.as_ref())
    }

    /// `node`'s value, type-erased and mutable.
    pub fn value_any_mut(&mut self, node: NodeId) -> Option<&mut dyn Any> {
        Some(self.node_mut(node)?.value.as_mut()?.value.as_mut())
    }

    /// [`value_info`](Self::value_info) and [`value_any_mut`](Self::value_any_mut) with one
    /// lookup.
    pub(crate) fn value_info_and_any_mut(
        &mut self,
        node: NodeId,
    ) -> Option<(&RegisteredType, &mut dyn Any)> {
        let value = self.node_mut(node)?.value.as_mut()?;
        Some((&value.ty, value.value.as_mut()))
    }

    /// Every node holding a `T`, with its value, in arena order (not tree order; use
    /// [`networked_depth_first`](Self::networked_depth_first) for that). Detached nodes are
    /// included.
    pub fn iter<T: Replicated>(&self) -> impl Iterator<Item = (NetRef<T>, &T)> + '_ {
        self.slots.iter().enumerate().filter_map(|(index, slot)| {
            let value = slot
                .node
                .as_ref()?
                .value
                .as_ref()?
                .value
                .downcast_ref::<T>()?;
            let id = NodeId {
                index: index as u32,
                generation: slot.generation,
            };
            Some((NetRef::new(id), value))
        })
    }

    /// Every node holding a `T`, with its value mutably, in arena order.
    pub fn iter_mut<T: Replicated>(&mut self) -> impl Iterator<Item = (NetRef<T>, &mut T)> + '_ {
        self.slots
            .iter_mut()
            .enumerate()
            .filter_map(|(index, slot)| {
                let generation = slot.generation;
                let value = slot
                    .node
                    .as_mut()?
                    .value
                    .as_mut()?
                    .value
                    .downcast_mut::<T>()?;
                let id = NodeId {
                    index: index as u32,
                    generation,
                };
                Some((NetRef::new(id), value))
            })
    }
}

//! The components the adapter reads and writes on networked entities.

use bevy_ecs::component::Component;
use mf_net::replication::NetId;
use mf_net::transport::PeerId;

/// Marks an entity for replication. On the server, an entity with `Networked` and one
/// component of a [replicated](crate::ReplicateAppExt::replicate) type is sent to every client
/// at the end of the frame; despawning it (or removing `Networked`) despawns it on the clients
/// (without `Networked`, its networked children stay, as roots). A component whose type derives
/// `Replicated` but was never registered is not sent, and is reported
/// ([`UnregisteredComponent`](crate::UnregisteredComponent)). Entities the clients make for the
/// server's carry it too.
#[derive(Component, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Networked;

/// The peer with authority over a [`Networked`] entity, read when the server networks it
/// (without it, the server has authority); the adapter keeps it showing the authority of the
/// entity's node, on every peer. Changed on the server once the entity is networked, it hands
/// the entity over: its node and its replicated components (its networked children keep
/// theirs); a peer that is not joined is refused with a warning. Changed on a client, it is
/// undone with a warning. A client's `authority` RPCs on its own entities go to the server.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetOwner(pub PeerId);

/// The net id of a networked entity, the same on every peer: set by the adapter once the
/// server has networked the entity, and on a client's entity as it is spawned.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NetworkId(pub NetId);

/// Marks the entity a client's interest is measured from (its player), on the server: the
/// adapter makes it the focus of its [`NetOwner`]'s client
/// ([`set_focus`](mf_net::replication::Multiplayer::set_focus)) whenever that changes, and
/// clears the focus of a client left with no `NetFocus` entity.
#[derive(Component, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetFocus;

//! Game messages between peers as Bevy messages: [`NetMessageAppExt::add_net_message`]
//! registers a type; systems send it by writing [`NetSend`] and read what arrived as
//! [`NetReceived`]. The core's bus carries them (see the book's Messages chapter): each type
//! has one channel, and both ends put the same types in their registries in the same order
//! ([`NetMessageTypes::registry`] builds one).
//!
//! Each type's functions are resolved once, at registration ([`MessageType`]): the adapter
//! subscribes each type to every bus the core starts (the handler queues what arrives in the
//! type's [`Inbox`]), hands the inbox to Bevy after the core received, and sends what systems
//! wrote before the core sends.

use std::cell::RefCell;
use std::rc::Rc;

use bevy_app::App;
use bevy_ecs::message::{Message, Messages};
use bevy_ecs::resource::Resource;
use bevy_ecs::world::World;
use mf_net::bus::{MessageRegistry, RegistryError};
use mf_net::codec::NetCodec;
use mf_net::transport::{Channel, PeerId};
use tracing::warn;

use crate::store::NetMultiplayer;

/// Where a [`NetSend`] goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendTo {
    /// The server (what a client sends).
    Server,
    /// One peer: on the server, one client.
    Peer(PeerId),
    /// Every connected peer: on the server, every client; on a client, the server.
    All,
    /// Every connected client but one (the server's, relaying what that one sent).
    AllBut(PeerId),
}

/// A message for the network: write it with `MessageWriter<NetSend<M>>`, and the adapter sends
/// it in `PostUpdate`, before the frame's snapshots. Offline, it goes nowhere.
#[derive(Message, Debug, Clone)]
pub struct NetSend<M: NetCodec + Send + Sync + 'static> {
    /// Where it goes.
    pub to: SendTo,
    /// The message.
    pub message: M,
}

/// A message that arrived: read it with `MessageReader<NetReceived<M>>`, from `PreUpdate`
/// (after [`NetSystems::Receive`](crate::NetSystems::Receive)) on.
#[derive(Message, Debug, Clone)]
pub struct NetReceived<M: NetCodec + Send + Sync + 'static> {
    /// The peer that sent it, as the transport knows it (never taken from the payload).
    pub from: PeerId,
    /// The message.
    pub message: M,
}

/// The messages of one type that arrived since the adapter last handed them to Bevy, shared
/// with the bus's handler (capacity kept; a non-send resource).
struct Inbox<M>(Rc<RefCell<Vec<(PeerId, M)>>>);

/// Scratch for the messages of one type to send (capacity kept).
#[derive(Resource)]
struct Outbox<M: NetCodec + Send + Sync + 'static>(Vec<NetSend<M>>);

/// One registered message type's functions, resolved at registration.
#[derive(Clone, Copy)]
struct MessageType {
    name: &'static str,
    register: fn(&mut MessageRegistry) -> Result<u16, RegistryError>,
    subscribe: fn(&mut NetMultiplayer) -> Result<(), RegistryError>,
    deliver: fn(&mut World),
    send: fn(&mut NetMultiplayer, Channel),
    channel: Channel,
}

/// The app's network message types, in registration order (a resource).
#[derive(Resource, Default)]
pub struct NetMessageTypes {
    types: Vec<MessageType>,
    /// The core's [`starts`](mf_net::replication::Multiplayer::starts) when the types were last
    /// subscribed.
    subscribed: u64,
}

impl NetMessageTypes {
    /// A message registry of protocol version `protocol_version` holding the app's message
    /// types, in the order they were added: pass it to `start_server` or `start_client`.
    ///
    /// # Errors
    ///
    /// The registry's, for a type added twice.
    pub fn registry(&self, protocol_version: u8) -> Result<MessageRegistry, RegistryError> {
        let mut registry = MessageRegistry::new(protocol_version);
        for ty in &self.types {
            (ty.register)(&mut registry)?;
        }
        Ok(registry)
    }
}

/// Registering network message types on an [`App`].
pub trait NetMessageAppExt {
    /// Sends and receives `M` on `channel`: systems write [`NetSend<M>`] and read
    /// [`NetReceived<M>`]. The registry passed to `start_server` or `start_client` must hold
    /// `M` ([`NetMessageTypes::registry`] makes one with every type added), and the other end
    /// must add the same types in the same order. Add [`MfNetPlugin`](crate::MfNetPlugin) first.
    fn add_net_message<M>(&mut self, channel: Channel) -> &mut Self
    where
        M: NetCodec + Clone + Send + Sync + 'static;
}

impl NetMessageAppExt for App {
    fn add_net_message<M>(&mut self, channel: Channel) -> &mut Self
    where
        M: NetCodec + Clone + Send + Sync + 'static,
    {
        self.add_message::<NetSend<M>>()
            .add_message::<NetReceived<M>>()
            .insert_resource(Outbox::<M>(Vec::new()));
        let world = self.world_mut();
        world.insert_non_send(Inbox::<M>(Rc::default()));
        world
            .get_resource_or_init::<NetMessageTypes>()
            .types
            .push(MessageType {
                name: M::NAME,
                register: MessageRegistry::register::<M>,
                subscribe: subscribe::<M>,
                deliver: deliver::<M>,
                send: send::<M>,
                channel,
            });
        self
    }
}

/// Before the core receives: every type is subscribed to a bus started since the last look.
pub(crate) fn subscribe_new_bus(mp: &mut NetMultiplayer) {
    let starts = mp.starts();
    let Some(types) = mp.store().world().get_resource::<NetMessageTypes>() else {
        return;
    };
    if types.subscribed == starts || !mp.is_running() {
        return;
    }
    for i in 0..types_len(mp) {
        let ty = type_at(mp, i);
        if let Err(error) = (ty.subscribe)(mp) {
            warn!(
                type_name = ty.name,
                %error,
                "a network message type is not in the registry the core started with: build \
                 it with `NetMessageTypes::registry`, or register the type in it"
            );
        }
    }
    let world = mp.store_mut().world_mut();
    if let Some(mut types) = world.get_resource_mut::<NetMessageTypes>() {
        types.subscribed = starts;
    }
}

/// After the core received: what arrived goes to Bevy as [`NetReceived`] messages.
pub(crate) fn deliver_received(mp: &mut NetMultiplayer) {
    for i in 0..types_len(mp) {
        let ty = type_at(mp, i);
        (ty.deliver)(mp.store_mut().world_mut());
    }
}

/// Before the core sends: what systems wrote as [`NetSend`] goes out.
pub(crate) fn send_written(mp: &mut NetMultiplayer) {
    for i in 0..types_len(mp) {
        let ty = type_at(mp, i);
        (ty.send)(mp, ty.channel);
    }
}

/// How many message types the app added.
fn types_len(mp: &NetMultiplayer) -> usize {
    let types = mp.store().world().get_resource::<NetMessageTypes>();
    types.map_or(0, |t| t.types.len())
}

/// The `i`th message type (`i` below [`types_len`]).
fn type_at(mp: &NetMultiplayer, i: usize) -> MessageType {
    mp.store().world().resource::<NetMessageTypes>().types[i]
}

/// Subscribes `M` to the core's bus: each one that arrives is queued in its [`Inbox`].
fn subscribe<M>(mp: &mut NetMultiplayer) -> Result<(), RegistryError>
where
    M: NetCodec + Clone + Send + Sync + 'static,
{
    let Some(inbox) = mp.store().world().get_non_send::<Inbox<M>>() else {
        return Ok(());
    };
    let inbox = Rc::clone(&inbox.0);
    let Some(bus) = mp.bus_mut() else {
        return Ok(());
    };
    bus.subscribe(move |_, ctx, message: &M, ()| {
        inbox.borrow_mut().push((ctx.sender, message.clone()));
    })
}

/// Hands the `M`s in its [`Inbox`] to Bevy.
fn deliver<M>(world: &mut World)
where
    M: NetCodec + Clone + Send + Sync + 'static,
{
    let Some(inbox) = world.get_non_send::<Inbox<M>>() else {
        return;
    };
    let inbox = Rc::clone(&inbox.0);
    let mut arrived = inbox.borrow_mut();
    if arrived.is_empty() {
        return;
    }
    if let Some(mut messages) = world.get_resource_mut::<Messages<NetReceived<M>>>() {
        let received = arrived.drain(..);
        messages.write_batch(received.map(|(from, message)| NetReceived { from, message }));
    }
}

/// Sends the [`NetSend<M>`]s written since the last look on `channel` (offline, drops them).
fn send<M>(mp: &mut NetMultiplayer, channel: Channel)
where
    M: NetCodec + Clone + Send + Sync + 'static,
{
    let world = mp.store_mut().world_mut();
    let Some(mut outbox) = world.get_resource_mut::<Outbox<M>>() else {
        return;
    };
    let mut out = std::mem::take(&mut outbox.0);
    if let Some(mut written) = world.get_resource_mut::<Messages<NetSend<M>>>() {
        out.extend(written.drain());
    }
    if let Some(bus) = mp.bus_mut() {
        for NetSend { to, message } in out.drain(..) {
            // A failure is counted and logged by the bus.
            let _ = match to {
                SendTo::Server => bus.send(PeerId::SERVER, &message, channel),
                SendTo::Peer(peer) => bus.send(peer, &message, channel),
                SendTo::All => bus.broadcast(&message, channel, None).map(drop),
                SendTo::AllBut(peer) => bus.broadcast(&message, channel, Some(peer)).map(drop),
            };
        }
    }
    out.clear();
    if let Some(mut outbox) = mp.store_mut().world_mut().get_resource_mut::<Outbox<M>>() {
        outbox.0 = out;
    }
}

//! Typed messages over a [`Transport`]: [`MessageRegistry`], [`MessageBus`], events and stats.
//!
//! Every packet is one message: a 7-byte [`MessageHeader`] (protocol version `u8`, message id
//! `u16`, sender tick `u32`, little-endian) followed by the payload's [`NetCodec`] encoding.
//!
//! ```
//! use mf_net::bus::{MessageBus, MessageRegistry};
//! use mf_net::transport::loopback::LoopbackNetwork;
//! use mf_net::prelude::*;
//!
//! #[derive(NetCodec, Debug)]
//! struct Chat { text: String }
//!
//! let mut registry = MessageRegistry::new(1);
//! registry.register::<Chat>().unwrap();
//!
//! let net = LoopbackNetwork::new();
//! let mut server: MessageBus<_, Vec<String>> =
//!     MessageBus::server(net.listen("game", 8).unwrap(), registry.clone());
//! server.subscribe(|_, _, chat: &Chat, log: &mut Vec<String>| log.push(chat.text.clone())).unwrap();
//! let mut client = MessageBus::client(net.connect("game", registry.fingerprint()), registry);
//!
//! let mut log = Vec::new();
//! for _ in 0..2 {
//!     client.poll(&mut ());
//!     server.poll(&mut log);
//!     client.flush();
//!     server.flush();
//! }
//! client.send(PeerId::SERVER, &Chat { text: "hello".into() }, Channel::Reliable).unwrap();
//! client.flush();
//! server.poll(&mut log);
//! assert_eq!(log, ["hello"]);
//! ```

mod core;
mod events;
mod header;
mod refusal;
mod registry;
mod traffic;

pub use self::core::{BusCore, BusSendError, Role, MAX_QUEUED_EVENTS};
pub use events::{BusEvent, BusStats, DropReason, MessageContext};
pub use header::MessageHeader;
pub use refusal::REGISTRY_LISTING;
pub use registry::{
    MessageInfo, MessageRegistry, RegistryError, FIRST_RESERVED_ID, MAX_MESSAGES, RESERVED_MESSAGES,
};
pub use traffic::MALFORMED_PACKET_LIMIT;

use std::any::Any;
use std::ops::{Deref, DerefMut};

use crate::codec::NetCodec;
use crate::transport::{Channel, PeerId, Transport, TransportEvent, SECURE_REQUEST_PREFIX};
use crate::wire::{DecodeError, NetReader};
use tracing::warn;

/// A message handler: the bus (to answer), the context, the decoded message, the game state.
type Handler<T, S, M> = Box<dyn FnMut(&mut BusCore<T>, &MessageContext, &M, &mut S)>;

/// The typed handlers of one message id, type-erased so one table holds every message type.
trait Slot<T, S> {
    fn dispatch(
        &mut self,
        bus: &mut BusCore<T>,
        ctx: &MessageContext,
        r: &mut NetReader<'_>,
        state: &mut S,
    ) -> Result<(), DecodeError>;

    fn as_any(&mut self) -> &mut dyn Any;
}

struct TypedSlot<T, S, M> {
    handlers: Vec<Handler<T, S, M>>,
}

impl<T: 'static, S: 'static, M: NetCodec + 'static> Slot<T, S> for TypedSlot<T, S, M> {
    fn dispatch(
        &mut self,
        bus: &mut BusCore<T>,
        ctx: &MessageContext,
        r: &mut NetReader<'_>,
        state: &mut S,
    ) -> Result<(), DecodeError> {
        // Decoded on the stack; handlers borrow it.
        let message = M::decode(r)?;
        r.finish()?;
        for handler in &mut self.handlers {
            handler(bus, ctx, &message, state);
        }
        Ok(())
    }

    fn as_any(&mut self) -> &mut dyn Any {
        self
    }
}

/// A typed message bus over one transport, for a server or a client.
///
/// `S` is the game state handed to every handler by [`poll`](Self::poll), so handlers reach it
/// without `Rc<RefCell<…>>`. The bus dereferences to [`BusCore`], which sends, lists peers and
/// yields events; handlers get the same `BusCore` so they can answer while dispatching.
///
/// Steady state allocates nothing: one encode writer and one receive buffer are reused, and
/// messages are decoded on the stack.
pub struct MessageBus<T, S = ()> {
    core: BusCore<T>,
    slots: Vec<Option<Box<dyn Slot<T, S>>>>,
}

impl<T: Transport + 'static, S: 'static> MessageBus<T, S> {
    /// A server bus: clients whose connect data differs from `registry`'s fingerprint are
    /// disconnected with [`ProtocolMismatch`](crate::transport::DisconnectReason::ProtocolMismatch).
    pub fn server(transport: T, registry: MessageRegistry) -> Self {
        Self::new(transport, registry, Role::Server)
    }

    /// A client bus. Create its transport with `registry.fingerprint()` as connect data.
    pub fn client(transport: T, registry: MessageRegistry) -> Self {
        Self::new(transport, registry, Role::Client)
    }

    fn new(transport: T, registry: MessageRegistry, role: Role) -> Self {
        Self {
            core: BusCore::new(transport, registry, role),
            slots: Vec::new(),
        }
    }

    /// Calls `handler` for every `M` received, during [`poll`](Self::poll). Several handlers
    /// may subscribe to one type; they run in subscription order.
    pub fn subscribe<M, F>(&mut self, handler: F) -> Result<(), RegistryError>
    where
        M: NetCodec + 'static,
        F: FnMut(&mut BusCore<T>, &MessageContext, &M, &mut S) + 'static,
    {
        let id = self
            .core
            .registry
            .id_of::<M>()
            .ok_or(RegistryError::NotRegistered(M::NAME))?;
        let index = usize::from(id);
        if self.slots.len() <= index {
            self.slots.resize_with(index + 1, || None);
        }
        let slot = self.slots[index].get_or_insert_with(|| {
            Box::new(TypedSlot::<T, S, M> {
                handlers: Vec::new(),
            }) as Box<dyn Slot<T, S>>
        });
        let typed = slot.as_any().downcast_mut::<TypedSlot<T, S, M>>();
        debug_assert!(
            typed.is_some(),
            "the handler slot of message id {id} holds another message type than {}",
            M::NAME
        );
        if let Some(typed) = typed {
            typed.handlers.push(Box::new(handler));
        }
        Ok(())
    }

    /// Takes every transport event, handles connections and dispatches messages to handlers.
    pub fn poll(&mut self, state: &mut S) {
        self.poll_with(state, |_, _, _, _| Ok(false));
    }

    /// Like [`poll`](Self::poll), but messages without a typed handler go to `raw` first
    /// (with the reader positioned after the header). `raw` returns `Ok(true)` when it handled
    /// the message, `Ok(false)` to let the bus drop it, or an error to drop it as malformed.
    pub fn poll_with<F>(&mut self, state: &mut S, mut raw: F)
    where
        F: FnMut(
            &mut BusCore<T>,
            &MessageContext,
            &mut NetReader<'_>,
            &mut S,
        ) -> Result<bool, DecodeError>,
    {
        loop {
            let core = &mut self.core;
            let (peer, channel) = match core.transport.poll_event() {
                None => break,
                Some(TransportEvent::Connected { peer, connect_data }) => {
                    core.on_connected(peer, connect_data);
                    continue;
                }
                Some(TransportEvent::Disconnected { peer, reason }) => {
                    core.on_disconnected(peer, reason);
                    continue;
                }
                Some(TransportEvent::Received {
                    peer,
                    channel,
                    data,
                }) => {
                    core.recv.clear();
                    core.recv.extend_from_slice(data);
                    (peer, channel)
                }
            };
            // The buffer leaves the core while handlers (which may send) hold the core.
            let buf = std::mem::take(&mut self.core.recv);
            self.dispatch(peer, channel, &buf, state, &mut raw);
            self.core.recv = buf;
        }
    }

    fn dispatch<F>(
        &mut self,
        peer: PeerId,
        channel: Channel,
        packet: &[u8],
        state: &mut S,
        raw: &mut F,
    ) where
        F: FnMut(
            &mut BusCore<T>,
            &MessageContext,
            &mut NetReader<'_>,
            &mut S,
        ) -> Result<bool, DecodeError>,
    {
        let core = &mut self.core;
        core.count_received(peer);
        core.stats.messages_received += 1;
        core.stats.bytes_received += packet.len() as u64;
        if core.role == Role::Server && packet.starts_with(&SECURE_REQUEST_PREFIX) {
            return core.refuse_secure_request(peer);
        }
        let mut r = NetReader::new(packet);
        let header = match MessageHeader::read(&mut r) {
            Ok(h) => h,
            Err(e) => return core.drop_packet(peer, None, DropReason::Malformed(e)),
        };
        let id = Some(header.id);
        // A refusing server's registry, read whatever its protocol version.
        if header.id == REGISTRY_LISTING && core.role == Role::Client {
            return match refusal::describe_listing(&core.registry, &mut r) {
                Ok(text) => {
                    warn!(refusal = %text, "the server refuses our message registry");
                    core.refusal = Some(text);
                    core.stats.messages_dispatched += 1;
                }
                Err(e) => core.drop_packet(peer, id, DropReason::Malformed(e)),
            };
        }
        if header.version != core.registry.protocol_version() {
            return core.drop_packet(peer, id, DropReason::ProtocolMismatch);
        }
        let ctx = MessageContext {
            sender: peer,
            tick: header.tick,
            channel,
            message_id: header.id,
        };
        let result = match self
            .slots
            .get_mut(usize::from(header.id))
            .and_then(Option::as_mut)
        {
            Some(slot) => slot.dispatch(core, &ctx, &mut r, state).map(|()| true),
            None => raw(core, &ctx, &mut r, state),
        };
        match result {
            Ok(true) => core.stats.messages_dispatched += 1,
            Ok(false) if core.registry.info(header.id).is_some() => {
                core.drop_packet(peer, id, DropReason::NoHandler)
            }
            Ok(false) => core.drop_packet(peer, id, DropReason::UnknownId),
            Err(e) => core.drop_packet(peer, id, DropReason::Malformed(e)),
        }
    }

    /// Consumes the bus, returning its transport.
    pub fn into_transport(self) -> T {
        self.core.transport
    }
}

impl<T, S> Deref for MessageBus<T, S> {
    type Target = BusCore<T>;

    fn deref(&self) -> &BusCore<T> {
        &self.core
    }
}

impl<T, S> DerefMut for MessageBus<T, S> {
    fn deref_mut(&mut self) -> &mut BusCore<T> {
        &mut self.core
    }
}

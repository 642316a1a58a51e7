//! In-process transport: a server and any number of clients in one process, with no socket.
//!
//! A [`LoopbackNetwork`] is an in-memory network. A server [`listen`](LoopbackNetwork::listen)s
//! under a name (any string; `"game:7777"` reads like an address), clients
//! [`connect`](LoopbackNetwork::connect) to that name, and each gets a [`LoopbackTransport`]
//! implementing [`Transport`]. The network is perfect: no loss, no delay, every channel in send
//! order. Put a [`SimulatedTransport`](super::simulated::SimulatedTransport) in front of an
//! endpoint to make it bad.
//!
//! # Behaviour
//!
//! - **Delivery happens at [`flush`](Transport::flush)**, as on a real transport: `send` copies
//!   the packet into a queue of the sending endpoint and `flush` moves every queued packet into
//!   the receivers' event queues, in send order. A frame-driven program sends during its frame
//!   and flushes at the end of it; the other side sees the packets the next time it polls.
//! - **Connecting completes at once**, but is reported as events: the server gets
//!   [`Connected`](TransportEvent::Connected) with a fresh [`PeerId`] (counting from 2, never
//!   reused) and the client's connect data; the client gets `Connected` for
//!   [`PeerId::SERVER`] with connect data 0. Connecting to a name nobody listens on, or to a
//!   server that already has `max_clients` clients, fails as a refused connection does: the
//!   client gets [`Disconnected`](TransportEvent::Disconnected) with
//!   [`ConnectFailed`](DisconnectReason::ConnectFailed) or
//!   [`ServerFull`](DisconnectReason::ServerFull), and the server sees nothing.
//! - **A peer can be sent to once its `Connected` event has been polled**, as with ENet. Before
//!   that, and after the remote side has left but before its `Disconnected` event has been
//!   polled, `send` fails with [`SendError::NotConnected`]; for ids that were never connected
//!   or whose `Disconnected` event has been polled, it fails with [`SendError::UnknownPeer`].
//! - **[`disconnect`](Transport::disconnect)** first delivers every packet still queued for the
//!   peer (both channels, in order), then the peer gets `Disconnected` with the reason. The local
//!   side gets no event for its own disconnect and nothing further from that peer: packets from
//!   it still waiting in the local event queue are discarded.
//! - **Dropping a transport** flushes it and disconnects every peer: a dropped server tells its
//!   clients [`Shutdown`](DisconnectReason::Shutdown), a dropped client tells the server
//!   [`Closed`](DisconnectReason::Closed). A server's name is free again once it is dropped.
//! - Packets larger than [`LoopbackNetwork::max_packet_size`] (32 MiB by default, ENet's
//!   default limit) are refused with [`SendError::TooLarge`]; [`advance`](Transport::advance)
//!   does nothing (the loopback has no timers).
//!
//! # Allocation
//!
//! Packets are copied into buffers from a pool shared by the whole network and given back when
//! the receiver polls its next event, and every queue keeps its capacity, so once warmed up,
//! sending, flushing and polling allocate nothing.
//!
//! # Threads
//!
//! The network is single-threaded by design: [`LoopbackNetwork`] and [`LoopbackTransport`] share
//! state through `Rc<RefCell<..>>` and are neither `Send` nor `Sync`. Run every endpoint of one
//! network on the same thread (one test, one game loop).
//!
//! ```
//! use mf_net::transport::loopback::LoopbackNetwork;
//! use mf_net::transport::{Channel, PeerId, Transport, TransportEvent};
//!
//! let network = LoopbackNetwork::new();
//! let mut server = network.listen("game", 8).expect("the name is free");
//! let mut client = network.connect("game", 42);
//!
//! let Some(TransportEvent::Connected { peer, connect_data: 42 }) = server.poll_event() else {
//!     panic!("the server sees the client");
//! };
//! assert_eq!(peer, PeerId(2));
//! assert!(matches!(
//!     client.poll_event(),
//!     Some(TransportEvent::Connected { peer: PeerId::SERVER, connect_data: 0 })
//! ));
//!
//! client.send(PeerId::SERVER, Channel::Reliable, b"hello").unwrap();
//! client.flush();
//! assert!(matches!(
//!     server.poll_event(),
//!     Some(TransportEvent::Received { data: b"hello", .. })
//! ));
//! ```

mod net_state;
mod network;
mod transport;

pub use network::{ListenError, LoopbackNetwork};
pub use transport::LoopbackTransport;

#[cfg(doc)]
use super::{DisconnectReason, PeerId, SendError, Transport, TransportEvent};

//! What a [`LoopbackNetwork`] holds: its endpoints, the links between
//! them, the listening names and the packet pool; connecting, routing and disconnect notices.

use std::collections::{HashMap, VecDeque};

use super::LoopbackNetwork;
use crate::transport::pool::PacketPool;
use crate::transport::{Channel, DisconnectReason, PeerId};

/// Everything a network holds, shared by its handles and transports.
pub(super) struct NetState {
    pub(super) pool: PacketPool,
    pub(super) endpoints: Vec<Option<Endpoint>>,
    pub(super) listeners: HashMap<String, usize>,
    pub(super) max_packet_size: usize,
}

impl Default for NetState {
    fn default() -> Self {
        Self {
            pool: PacketPool::new(),
            endpoints: Vec::new(),
            listeners: HashMap::new(),
            max_packet_size: LoopbackNetwork::DEFAULT_MAX_PACKET_SIZE,
        }
    }
}

/// What the network knows of one transport: its incoming events and its connections.
pub(super) struct Endpoint {
    pub(super) inbox: VecDeque<Incoming>,
    /// Sorted by `local` (server ids are handed out in increasing order).
    pub(super) links: Vec<Link>,
    pub(super) server: Option<ServerInfo>,
}

/// What a server endpoint adds: its name and its client slots.
pub(super) struct ServerInfo {
    /// `None` for the server half of a [`LoopbackNetwork::pair`].
    pub(super) name: Option<String>,
    pub(super) max_clients: usize,
    pub(super) next_peer: u64,
}

/// One side of a connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Link {
    /// How this endpoint names the peer.
    pub(super) local: PeerId,
    /// The peer's endpoint index (meaningless once `state` is `Closing`).
    pub(super) remote_endpoint: usize,
    /// How the peer names this endpoint.
    pub(super) remote_id: PeerId,
    pub(super) state: LinkState,
}

/// How far a connection got, from one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LinkState {
    /// Established, but this side has not polled its `Connected` event yet.
    Connecting,
    /// Established and announced: packets may be sent.
    Connected,
    /// The remote side has gone; this side's `Disconnected` event is waiting in its queue.
    Closing,
}

/// An event waiting in an endpoint's queue.
pub(super) enum Incoming {
    Connected {
        peer: PeerId,
        connect_data: u32,
    },
    Disconnected {
        peer: PeerId,
        reason: DisconnectReason,
    },
    Packet {
        peer: PeerId,
        channel: Channel,
        buf: Vec<u8>,
    },
}

/// A packet queued by `send`, delivered at `flush`.
pub(super) struct Outgoing {
    pub(super) peer: PeerId,
    pub(super) channel: Channel,
    pub(super) buf: Vec<u8>,
}

impl Endpoint {
    pub(super) fn new(server: Option<ServerInfo>) -> Self {
        Self {
            inbox: VecDeque::new(),
            links: Vec::new(),
            server,
        }
    }

    pub(super) fn link(&self, peer: PeerId) -> Option<&Link> {
        let i = self.links.binary_search_by_key(&peer, |l| l.local).ok()?;
        self.links.get(i)
    }

    pub(super) fn link_mut(&mut self, peer: PeerId) -> Option<&mut Link> {
        let i = self.links.binary_search_by_key(&peer, |l| l.local).ok()?;
        self.links.get_mut(i)
    }

    pub(super) fn remove_link(&mut self, peer: PeerId) -> Option<Link> {
        let i = self.links.binary_search_by_key(&peer, |l| l.local).ok()?;
        Some(self.links.remove(i))
    }

    pub(super) fn active_links(&self) -> usize {
        self.links
            .iter()
            .filter(|l| l.state != LinkState::Closing)
            .count()
    }
}

impl NetState {
    pub(super) fn endpoint(&self, index: usize) -> Option<&Endpoint> {
        self.endpoints.get(index)?.as_ref()
    }

    pub(super) fn endpoint_mut(&mut self, index: usize) -> Option<&mut Endpoint> {
        self.endpoints.get_mut(index)?.as_mut()
    }

    pub(super) fn add_endpoint(&mut self, endpoint: Endpoint) -> usize {
        match self.endpoints.iter().position(Option::is_none) {
            Some(free) => {
                self.endpoints[free] = Some(endpoint);
                free
            }
            None => {
                self.endpoints.push(Some(endpoint));
                self.endpoints.len() - 1
            }
        }
    }

    /// Moves one queued packet of endpoint `from` into its receiver's event queue, or recycles
    /// it when the connection is gone.
    pub(super) fn route(&mut self, from: usize, out: Outgoing) {
        let link = self.endpoint(from).and_then(|e| e.link(out.peer)).copied();
        let target = match link {
            Some(link) if link.state == LinkState::Connected => link,
            _ => return self.pool.give(out.buf),
        };
        match self.endpoint_mut(target.remote_endpoint) {
            Some(remote) => remote.inbox.push_back(Incoming::Packet {
                peer: target.remote_id,
                channel: out.channel,
                buf: out.buf,
            }),
            None => self.pool.give(out.buf),
        }
    }

    /// Tells the other side of `link` that the connection ended with `reason`.
    pub(super) fn notify_remote(&mut self, link: Link, reason: DisconnectReason) {
        if link.state == LinkState::Closing {
            return; // the remote side already left
        }
        if let Some(remote) = self.endpoint_mut(link.remote_endpoint) {
            if let Some(back) = remote.link_mut(link.remote_id) {
                back.state = LinkState::Closing;
            }
            remote.inbox.push_back(Incoming::Disconnected {
                peer: link.remote_id,
                reason,
            });
        }
    }

    /// Accepts a new client of `server` (an endpoint index), or says why not.
    fn accept(
        &mut self,
        server: usize,
        client: usize,
        connect_data: u32,
    ) -> Result<PeerId, DisconnectReason> {
        let Some(endpoint) = self.endpoint_mut(server) else {
            return Err(DisconnectReason::ConnectFailed);
        };
        let active = endpoint.active_links();
        let Some(info) = endpoint.server.as_mut() else {
            return Err(DisconnectReason::ConnectFailed);
        };
        if active >= info.max_clients {
            return Err(DisconnectReason::ServerFull);
        }
        let peer = PeerId(info.next_peer);
        info.next_peer += 1;
        endpoint.links.push(Link {
            local: peer,
            remote_endpoint: client,
            remote_id: PeerId::SERVER,
            state: LinkState::Connecting,
        });
        endpoint
            .inbox
            .push_back(Incoming::Connected { peer, connect_data });
        Ok(peer)
    }

    /// Creates a client endpoint and connects it to `server` (or records why it could not).
    pub(super) fn connect_to(&mut self, server: Option<usize>, connect_data: u32) -> usize {
        let client = self.add_endpoint(Endpoint::new(None));
        let outcome = match server {
            Some(server) => self
                .accept(server, client, connect_data)
                .map(|peer| (server, peer)),
            None => Err(DisconnectReason::ConnectFailed),
        };
        if let Some(endpoint) = self.endpoint_mut(client) {
            match outcome {
                Ok((server, peer)) => {
                    endpoint.links.push(Link {
                        local: PeerId::SERVER,
                        remote_endpoint: server,
                        remote_id: peer,
                        state: LinkState::Connecting,
                    });
                    endpoint.inbox.push_back(Incoming::Connected {
                        peer: PeerId::SERVER,
                        connect_data: 0,
                    });
                }
                Err(reason) => {
                    // A link that is already closing, so that `send` says `NotConnected` until
                    // the client has polled the failure.
                    endpoint.links.push(Link {
                        local: PeerId::SERVER,
                        remote_endpoint: usize::MAX,
                        remote_id: PeerId(0),
                        state: LinkState::Closing,
                    });
                    endpoint.inbox.push_back(Incoming::Disconnected {
                        peer: PeerId::SERVER,
                        reason,
                    });
                }
            }
        }
        client
    }
}

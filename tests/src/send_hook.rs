//! [`SendHook`]: a transport wrapper that shows every outgoing packet to a closure, which may
//! refuse it. Tests use it to record what a runtime sends or to make sends fail on demand.

use std::time::Duration;

use mf_net::transport::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};

/// Wraps a transport: each [`send`](Transport::send) first calls `hook(peer, channel, data)`;
/// an `Err` is returned as the send's error (the packet is not sent), `Ok` passes the packet
/// on. Everything else goes straight to the inner transport.
///
/// ```
/// use std::cell::Cell;
/// use std::rc::Rc;
///
/// use mf_net::transport::loopback::LoopbackNetwork;
/// use mf_net::transport::{Channel, PeerId, SendError, Transport};
/// use mf_net_tests::send_hook::SendHook;
///
/// let (_server, client) = LoopbackNetwork::new().pair(0);
/// let sent = Rc::new(Cell::new(0));
/// let counter = Rc::clone(&sent);
/// let mut client = SendHook::new(client, move |_, _, _| {
///     counter.set(counter.get() + 1);
///     Err(SendError::Refused)
/// });
/// assert_eq!(client.send(PeerId::SERVER, Channel::Reliable, b"x"), Err(SendError::Refused));
/// assert_eq!(sent.get(), 1);
/// ```
pub struct SendHook<T, F> {
    inner: T,
    hook: F,
}

impl<T, F> SendHook<T, F>
where
    T: Transport,
    F: FnMut(PeerId, Channel, &[u8]) -> Result<(), SendError>,
{
    /// `inner`, with `hook` called before each send.
    pub fn new(inner: T, hook: F) -> Self {
        Self { inner, hook }
    }
}

impl<T, F> Transport for SendHook<T, F>
where
    T: Transport,
    F: FnMut(PeerId, Channel, &[u8]) -> Result<(), SendError>,
{
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        (self.hook)(peer, channel, data)?;
        self.inner.send(peer, channel, data)
    }

    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        self.inner.poll_event()
    }

    fn advance(&mut self, dt: Duration) {
        self.inner.advance(dt);
    }

    fn flush(&mut self) {
        self.inner.flush();
    }

    fn disconnect(&mut self, peer: PeerId, reason: DisconnectReason) {
        self.inner.disconnect(peer, reason);
    }

    fn stats(&self) -> TransportStats {
        self.inner.stats()
    }

    fn capacity(&self) -> Option<usize> {
        self.inner.capacity()
    }
}

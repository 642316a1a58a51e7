//! [`Tap`]: a transport wrapper that records every packet sent through it, can hold them back
//! (intercept), and slips injected packets onto the wire at its next flush, as an attacker on
//! the path would. The secure layer's tests put it under a secure endpoint.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use mf_net::transport::{
    Channel, DisconnectReason, PeerId, SendError, Transport, TransportEvent, TransportStats,
};

/// What a [`Tap`] saw go out, and what it will slip onto the wire at its next flush.
#[derive(Default)]
pub struct TapLog {
    /// Every packet sent through it.
    pub sent: Vec<(PeerId, Channel, Vec<u8>)>,
    /// Packets to send at the next flush.
    pub inject: Vec<(PeerId, Channel, Vec<u8>)>,
    /// Whether sent packets are held back (recorded, not forwarded): intercepted.
    pub hold: bool,
}

/// A shared [`TapLog`].
pub type Handle = Rc<RefCell<TapLog>>;

/// A transport under the secure layer that records the sealed packets and injects others, as
/// an attacker on the path would.
pub struct Tap<T> {
    inner: T,
    log: Handle,
}

impl<T> Tap<T> {
    /// `inner`, recording into `log`.
    pub fn new(inner: T, log: Handle) -> Self {
        Self { inner, log }
    }
}

impl<T: Transport> Transport for Tap<T> {
    fn send(&mut self, peer: PeerId, channel: Channel, data: &[u8]) -> Result<(), SendError> {
        let mut log = self.log.borrow_mut();
        log.sent.push((peer, channel, data.to_vec()));
        if log.hold {
            return Ok(());
        }
        self.inner.send(peer, channel, data)
    }
    fn poll_event(&mut self) -> Option<TransportEvent<'_>> {
        self.inner.poll_event()
    }
    fn advance(&mut self, dt: Duration) {
        self.inner.advance(dt);
    }
    fn flush(&mut self) {
        for (peer, channel, data) in std::mem::take(&mut self.log.borrow_mut().inject) {
            // A refused injection is as good as one lost on the wire.
            let _ = self.inner.send(peer, channel, &data);
        }
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

//! Handshakes in progress on a server: ENet peers created by a CONNECT and waiting for the
//! acknowledgement of their VERIFY_CONNECT. Looked at after every CONNECT ENet takes and at the
//! end of every [`poll_event`](mf_net::transport::Transport::poll_event) drain:
//!
//! - a new one from an IP address that already holds
//!   [`max_peers_per_ip`](crate::EnetConfig::max_peers_per_ip) peers is dropped (the socket
//!   drops such CONNECTs before ENet sees them, from what the last look found: this catches what
//!   it could not know);
//! - one older than [`handshake_timeout`](crate::EnetConfig::handshake_timeout) is dropped;
//! - when a CONNECT arrives and no slot is free, the oldest is dropped to make room for it: a
//!   flood of spoofed CONNECTs pushes out its own handshakes instead of locking everyone out,
//!   and a genuine client gets in if its handshake completes before that many newer CONNECTs
//!   arrive (the handshakes in progress are a queue of the free slots' length).
//!
//! Dropping is ENet's `reset`, which sends nothing: a spoofed source is sent nothing more (and
//! ENet's resends of the VERIFY_CONNECT in between are dropped by the
//! [`GuardedSocket`]).

use std::net::SocketAddr;
use std::time::Instant;

use rusty_enet::{Host, PeerID, PeerState};

use super::{EnetTransport, GuardedSocket, Role, Slot, SlotState};
use crate::diagnostics::enet;
use crate::EnetConfig;

impl EnetTransport {
    /// Looks at the handshakes if a CONNECT reached ENet or waits for a slot since the last
    /// look, or `always`.
    pub(super) fn look_at_handshakes(&mut self, always: bool) {
        let waiting = self.host.socket().deferred();
        let connect = self.host.socket_mut().begin_service();
        if (connect || waiting || always) && matches!(self.role, Role::Server { .. }) {
            self.sweep_handshakes(waiting);
        }
    }

    /// ENet slots holding a connection in any state: connected, in the handshake, or closing.
    /// Under a flood of spoofed CONNECTs this stays at most `max_clients` + `overflow_slots`,
    /// with at most [`max_peers_per_ip`](crate::EnetConfig::max_peers_per_ip) per address, and
    /// a handshake holds its slot for at most
    /// [`handshake_timeout`](crate::EnetConfig::handshake_timeout).
    pub fn slots_in_use(&self) -> usize {
        enet(|| {
            (0..self.slots.len())
                .filter(|&slot| {
                    self.host
                        .get_peer(PeerID(slot))
                        .is_some_and(|p| p.state() != PeerState::Disconnected)
                })
                .count()
        })
    }

    /// Drops the handshakes over a limit; with `make_room`, the oldest one too if no slot is
    /// free.
    fn sweep_handshakes(&mut self, make_room: bool) {
        let now = Instant::now();
        let Self {
            host,
            slots,
            config,
            ..
        } = self;
        enet(|| {
            let mut free = false;
            let mut oldest: Option<(Instant, usize)> = None;
            for slot in 0..slots.len() {
                match look_at(host, slots, slot, now, config) {
                    Look::Free => free = true,
                    Look::Pending(since) => match oldest {
                        Some((t, _)) if t <= since => {}
                        _ => oldest = Some((since, slot)),
                    },
                    Look::Busy => {}
                }
            }
            if let (false, true, Some((_, slot))) = (free, make_room, oldest) {
                tracing::debug!(slot, "ENet slots full: dropping the oldest handshake");
                drop_handshake(host, slots, slot);
                free = true;
            }
            // Full with a handshake to drop: the next CONNECT waits for it to be dropped. Full
            // without one: ENet refuses it (no slot), as it always did.
            host.socket_mut().set_full(!free && oldest.is_some());
        });
    }
}

/// What a slot is, as far as handshakes go.
enum Look {
    Free,
    /// A handshake in progress since then.
    Pending(Instant),
    Busy,
}

/// Classifies `slot`, dropping its handshake if it is over a limit.
fn look_at(
    host: &mut Host<GuardedSocket>,
    slots: &mut [Slot],
    slot: usize,
    now: Instant,
    config: &EnetConfig,
) -> Look {
    let Some(peer) = host.get_peer(PeerID(slot)) else {
        return Look::Busy;
    };
    let (state, address) = (peer.state(), peer.address());
    let Some(known) = slots.get(slot).map(|s| s.state) else {
        return Look::Busy;
    };
    let holder = address.filter(|_| state != PeerState::Disconnected);
    host.socket_mut().set_holder(slot, holder.map(|a| a.ip()));
    if state != PeerState::AcknowledgingConnect {
        host.socket_mut().handshake_over(slot);
    }
    match (state, address) {
        (PeerState::Disconnected, _) => {
            if matches!(known, SlotState::Handshake { .. }) {
                set_state(slots, slot, SlotState::Free);
            }
            Look::Free
        }
        (PeerState::AcknowledgingConnect, Some(from)) => {
            let since = match known {
                SlotState::Handshake { since, from: seen } if seen == from => since,
                _ => {
                    if peers_of(host, from, slot) >= config.max_peers_per_ip {
                        tracing::debug!(%from, "ENet: too many peers from one address");
                        drop_handshake(host, slots, slot);
                        return Look::Free;
                    }
                    set_state(slots, slot, SlotState::Handshake { since: now, from });
                    now
                }
            };
            if now.saturating_duration_since(since) >= config.handshake_timeout {
                tracing::debug!(%from, "ENet handshake not completed in time");
                drop_handshake(host, slots, slot);
                return Look::Free;
            }
            Look::Pending(since)
        }
        _ => Look::Busy,
    }
}

fn set_state(slots: &mut [Slot], slot: usize, state: SlotState) {
    if let Some(s) = slots.get_mut(slot) {
        s.state = state;
    }
}

/// ENet peers in any state but disconnected from `from`'s IP address, `slot` aside.
fn peers_of(host: &mut Host<GuardedSocket>, from: SocketAddr, slot: usize) -> usize {
    host.peers()
        .filter(|p| {
            p.id().0 != slot
                && p.state() != PeerState::Disconnected
                && p.address().is_some_and(|a| a.ip() == from.ip())
        })
        .count()
}

/// Resets the handshake on `slot` (ENet sends nothing) and frees the slot.
fn drop_handshake(host: &mut Host<GuardedSocket>, slots: &mut [Slot], slot: usize) {
    if let Some(peer) = host.get_peer_mut(PeerID(slot)) {
        peer.reset();
    }
    host.socket_mut().handshake_over(slot);
    host.socket_mut().set_holder(slot, None);
    set_state(slots, slot, SlotState::Free);
}

//! The server's side of the handshake: a request, a challenge, its answer, admission.

use mf_net::transport::{Channel, DisconnectReason, PeerId, Transport};

use crate::admission::{Clock, Opened, Request, Silent, Ticket};
use crate::challenge::CHALLENGE_LEN;
use crate::key::random_bytes;
use crate::pending::{Challenged, Pending, Stage};
use crate::server::{Admitted, SecureServer, Upward};
use crate::session::{Dropped, End, Session};
use crate::wire::{KIND_ACCEPT, KIND_CHALLENGE, KIND_DENIED, KIND_RESPONSE, SALT_LEN};
use crate::DuplicatePolicy;

impl<T: Transport> SecureServer<T> {
    pub(crate) fn clock(&self) -> Clock {
        Clock {
            now: self.now.as_secs(),
            oldest_created: if self.config.refuse_tokens_before_start {
                self.started
            } else {
                0
            },
        }
    }

    /// A peer connected on the inner transport: it waits for its request, once there is room
    /// for it (see [`make_room`](Self::make_room); a newcomer there is no room for is dropped
    /// without an answer).
    pub(crate) fn on_connected(&mut self, peer: PeerId, connect_data: u32) {
        if !self.make_room() {
            return self.inner.disconnect(peer, DisconnectReason::ConnectFailed);
        }
        self.pending.push(Pending {
            peer,
            connect_data,
            since: self.now,
            stage: Stage::AwaitingRequest,
        });
    }

    /// Acts on the request of `self.pending[i]`.
    pub(crate) fn on_request(&mut self, i: usize, request: Request) {
        let opened = match request {
            Request::Opened(opened) => opened,
            Request::Plain => {
                self.stats.refused_plain += 1;
                return self.drop_pending(i, DisconnectReason::SecureRequired);
            }
            Request::Silent(Silent::Malformed) => {
                self.stats.refused_malformed += 1;
                return self.drop_pending(i, DisconnectReason::ConnectFailed);
            }
            Request::Silent(Silent::Invalid) => {
                self.stats.refused_invalid += 1;
                return self.drop_pending(i, DisconnectReason::ConnectFailed);
            }
        };
        let Ok(salt) = random_bytes::<SALT_LEN>() else {
            return self.drop_pending(i, DisconnectReason::ConnectFailed);
        };
        let Opened { ticket, verdict } = opened;
        let keys = ticket.connection_keys(&salt);
        let session = Session::new(ticket.protocol_id, &keys, End::Server);
        let mut challenged = Box::new(Challenged {
            ticket,
            session,
            salt,
        });
        if let Err(reason) = verdict.and_then(|()| self.admissible(&challenged.ticket).map(drop)) {
            let pending = self.pending.swap_remove(i);
            return self.deny(pending.peer, &mut challenged, reason);
        }
        let peer = self.pending[i].peer;
        let challenge: [u8; CHALLENGE_LEN] = self.challenger.issue(peer, &challenged.ticket.tag);
        let sealed = challenged.session.seal_handshake(
            KIND_CHALLENGE,
            Some(&challenged.salt),
            &challenge,
            &mut self.scratch,
        );
        if !sealed
            || self
                .inner
                .send(peer, Channel::Reliable, &self.scratch)
                .is_err()
        {
            return self.drop_pending(i, DisconnectReason::ConnectFailed);
        }
        self.stats.challenges_sent += 1;
        self.pending[i].stage = Stage::Challenged(challenged);
    }

    /// Acts on what `self.pending[i]`, challenged, sent: `answer` is the packet opened (into
    /// `self.opened`) with its connection's keys. A packet that is not the challenge's answer
    /// is dropped and counted; the peer keeps its chance until the handshake timeout.
    pub(crate) fn on_response(&mut self, i: usize, answer: Result<u8, Dropped>) {
        let peer = self.pending[i].peer;
        let Stage::Challenged(challenged) = &self.pending[i].stage else {
            return;
        };
        let answered = answer == Ok(KIND_RESPONSE)
            && self
                .challenger
                .verify(&self.opened, peer, &challenged.ticket.tag);
        if !answered {
            self.stats.challenge_failures += 1;
            return;
        }
        let pending = self.pending.swap_remove(i);
        let Stage::Challenged(mut challenged) = pending.stage else {
            return;
        };
        match self.admissible(&challenged.ticket) {
            Ok(replacing) => self.admit(pending.peer, pending.connect_data, *challenged, replacing),
            Err(reason) => self.deny(pending.peer, &mut challenged, reason),
        }
    }

    /// The checks that depend on the other connections: replays, duplicates, room. Returns the
    /// connection the ticket replaces, if any.
    fn admissible(&self, ticket: &Ticket) -> Result<Option<PeerId>, DisconnectReason> {
        if self.used.contains(&ticket.tag) {
            return Err(DisconnectReason::TokenReplayed);
        }
        let replacing = self.peer_of(ticket.identity.client_id());
        if replacing.is_some() && self.config.duplicates == DuplicatePolicy::RefuseNewer {
            return Err(DisconnectReason::ClientIdInUse);
        }
        let others = self.peers.len() - usize::from(replacing.is_some());
        if others >= self.config.max_clients {
            return Err(DisconnectReason::ServerFull);
        }
        Ok(replacing)
    }

    fn admit(
        &mut self,
        peer: PeerId,
        connect_data: u32,
        challenged: Challenged,
        replacing: Option<PeerId>,
    ) {
        let Challenged {
            ticket,
            mut session,
            ..
        } = challenged;
        let sent = session.seal(KIND_ACCEPT, Channel::Reliable, &[], &mut self.scratch)
            && self
                .inner
                .send(peer, Channel::Reliable, &self.scratch)
                .is_ok();
        if !sent {
            self.inner.disconnect(peer, DisconnectReason::ConnectFailed);
            return;
        }
        if let Some(old) = replacing {
            self.forget(old);
            self.inner.disconnect(old, DisconnectReason::Replaced);
            self.stats.replaced += 1;
            self.events
                .push_back(Upward::Disconnected(old, DisconnectReason::Replaced));
        }
        self.used.record(ticket.tag);
        let at = self.peers.partition_point(|p| p.peer < peer);
        self.peers.insert(
            at,
            Admitted {
                peer,
                identity: ticket.identity,
                session,
                heard: self.now,
                sent: self.now,
            },
        );
        self.stats.admitted += 1;
        self.events.push_back(Upward::Connected(peer, connect_data));
    }

    /// Refuses `peer` (no longer pending), whose token opened, with `reason` sealed for the
    /// token holder.
    fn deny(&mut self, peer: PeerId, challenged: &mut Challenged, reason: DisconnectReason) {
        self.stats.count_refusal(reason);
        let code = reason.code().to_le_bytes();
        if challenged.session.seal_handshake(
            KIND_DENIED,
            Some(&challenged.salt),
            &code,
            &mut self.scratch,
        ) {
            let _ = self.inner.send(peer, Channel::Reliable, &self.scratch);
        }
        self.inner.disconnect(peer, DisconnectReason::ConnectFailed);
    }

    /// Forgets `self.pending[i]` and disconnects it on the inner transport with `reason`.
    fn drop_pending(&mut self, i: usize, reason: DisconnectReason) {
        let pending = self.pending.swap_remove(i);
        self.inner.disconnect(pending.peer, reason);
    }

    /// Disconnects pending peers whose handshake is overdue.
    pub(crate) fn expire_handshakes(&mut self) {
        let mut i = 0;
        while let Some(p) = self.pending.get(i) {
            if self.now.saturating_sub(p.since) >= self.config.handshake_timeout {
                self.stats.handshake_timeouts += 1;
                self.drop_pending(i, DisconnectReason::Timeout);
            } else {
                i += 1;
            }
        }
    }
}

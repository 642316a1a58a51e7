//! [`ControlQueue`]: the spawns, despawns and moves decided for one client and not sent yet, in the
//! order they were decided, sent in as few reliable messages as the per-message limits allow:
//! a client walking into a new part of the world is sent a spawn message per kilobyte of spawns
//! and one despawn message per pass, not one reliable message per group (each of which costs a
//! message header here and, on ENet, a reliable command and its acknowledgement).
//!
//! A spawn is written when it is decided (with the group's state as of then, and refused then
//! if a string of it is over the limit), into the queue's buffer; the server sends the queue
//! ([`ServerState::flush_queued`](crate::replication::server::state::ServerState::flush_queued))
//! before any other control message to the client and at the end of each pass that queues.

use crate::wire::NetWriter;

/// The most despawns one despawn message carries (at most 5 bytes each).
pub(crate) const MAX_DESPAWNS_PER_MESSAGE: usize = 1024;

/// The bytes of spawns past which a spawn message takes no further spawn: one UDP datagram's
/// worth (a single spawn larger than that goes in a message of its own).
pub(crate) const SPAWN_MESSAGE_BYTES: usize = 1024;

/// One thing queued (see the [module documentation](self)).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Queued {
    /// The spawn written up to this offset of the buffer (from the previous spawn's end).
    Spawn { end: u32 },
    /// The despawn of the group whose first net id this is.
    Despawn(u32),
    /// A group moved: its [`PARENT`](crate::replication::message_ids::PARENT) payload, in the
    /// buffer up to this offset (from the previous entry's end).
    Parent { end: u32 },
}

/// The spawns, despawns and moves queued for one client (see the [module documentation](self)).
/// Allocates nothing once its buffers have grown.
#[derive(Default)]
pub(crate) struct ControlQueue {
    queued: Vec<Queued>,
    /// The queued spawns' payloads, back to back, each behind its length, and the moves'
    /// payloads among them.
    spawns: NetWriter,
}

impl ControlQueue {
    /// Whether nothing is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.queued.is_empty()
    }

    /// Queues the despawn of the group whose first net id is `first`.
    pub(crate) fn despawn(&mut self, first: u32) {
        self.queued.push(Queued::Despawn(first));
    }

    /// Queues the move of a group, its payload written by `write`.
    pub(crate) fn parent(&mut self, write: impl FnOnce(&mut NetWriter)) {
        write(&mut self.spawns);
        let end = u32::try_from(self.spawns.len()).unwrap_or(u32::MAX);
        self.queued.push(Queued::Parent { end });
    }

    /// Queues a spawn whose payload `write` writes (through `scratch` if it is 128 bytes or
    /// longer). Returns `false`, queuing nothing, if the payload holds a string over the limit.
    pub(crate) fn spawn(
        &mut self,
        scratch: &mut NetWriter,
        write: impl FnOnce(&mut NetWriter),
    ) -> bool {
        let start = self.spawns.len();
        self.spawns.write_prefixed(scratch, write);
        if self.spawns.take_over_limit() {
            self.spawns.truncate(start);
            return false;
        }
        let end = u32::try_from(self.spawns.len()).unwrap_or(u32::MAX);
        self.queued.push(Queued::Spawn { end });
        true
    }

    /// What is queued, as the messages that carry it: each run of despawns in messages of up
    /// to [`MAX_DESPAWNS_PER_MESSAGE`], each run of spawns in messages of up to
    /// [`SPAWN_MESSAGE_BYTES`] (or one spawn).
    pub(crate) fn messages(&self) -> Messages<'_> {
        Messages {
            queue: self,
            at: 0,
            from: 0,
        }
    }

    /// Forgets everything queued, keeping the buffers.
    pub(crate) fn clear(&mut self) {
        self.queued.clear();
        self.spawns.clear();
    }
}

/// One message of a [`ControlQueue`], in the order they go.
pub(crate) enum QueuedMessage<'a> {
    /// Despawns: the first net id of each group.
    Despawns(DespawnIds<'a>),
    /// Spawns: the payloads, each behind its length, as the message carries them.
    Spawns(&'a [u8]),
    /// A group moved: the message's payload.
    Parent(&'a [u8]),
}

/// The first net ids of a despawn message.
pub(crate) type DespawnIds<'a> =
    std::iter::FilterMap<std::slice::Iter<'a, Queued>, fn(&Queued) -> Option<u32>>;

/// The messages of a [`ControlQueue`], in order (see [`ControlQueue::messages`]).
pub(crate) struct Messages<'a> {
    queue: &'a ControlQueue,
    /// The next queued item, and where its spawn bytes start.
    at: usize,
    from: usize,
}

impl<'a> Iterator for Messages<'a> {
    type Item = QueuedMessage<'a>;

    fn next(&mut self) -> Option<QueuedMessage<'a>> {
        let rest = self.queue.queued.get(self.at..).filter(|r| !r.is_empty())?;
        Some(match rest[0] {
            Queued::Despawn(_) => {
                let run = despawn_run(rest);
                self.at += run;
                let first: fn(&Queued) -> Option<u32> = |q| match *q {
                    Queued::Despawn(first) => Some(first),
                    Queued::Spawn { .. } | Queued::Parent { .. } => None,
                };
                QueuedMessage::Despawns(rest[..run].iter().filter_map(first))
            }
            Queued::Parent { end } => {
                let end = end as usize;
                let bytes = &self.queue.spawns.as_slice()[self.from..end];
                (self.at, self.from) = (self.at + 1, end);
                QueuedMessage::Parent(bytes)
            }
            Queued::Spawn { .. } => {
                let (run, end) = spawn_run(rest, self.from);
                let bytes = &self.queue.spawns.as_slice()[self.from..end];
                (self.at, self.from) = (self.at + run, end);
                QueuedMessage::Spawns(bytes)
            }
        })
    }
}

/// How many of `queued` (which starts with a despawn) go in one despawn message: the despawns
/// in a row, up to [`MAX_DESPAWNS_PER_MESSAGE`].
fn despawn_run(queued: &[Queued]) -> usize {
    queued
        .iter()
        .take(MAX_DESPAWNS_PER_MESSAGE)
        .take_while(|q| matches!(q, Queued::Despawn(_)))
        .count()
}

/// How many of `queued` (which starts with a spawn whose bytes start at `from`) go in one
/// spawn message, and where their bytes end: the spawns in a row while their bytes stay within
/// [`SPAWN_MESSAGE_BYTES`], and the first one whatever its size.
fn spawn_run(queued: &[Queued], from: usize) -> (usize, usize) {
    let (mut run, mut end) = (0, from);
    for q in queued {
        let Queued::Spawn { end: next } = *q else {
            break;
        };
        let next = next as usize;
        if run > 0 && next - from > SPAWN_MESSAGE_BYTES {
            break;
        }
        (run, end) = (run + 1, next);
    }
    (run, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spawn_of(queue: &mut ControlQueue, len: usize) {
        let mut scratch = NetWriter::new();
        assert!(queue.spawn(&mut scratch, |w| w.write_bytes(&vec![7; len])));
    }

    #[test]
    fn spawns_in_a_row_share_a_message_up_to_the_limit_and_a_larger_one_goes_alone() {
        let mut queue = ControlQueue::default();
        // 300 bytes + a 2-byte length each: three fit in 1024 bytes, a fourth does not.
        for _ in 0..4 {
            spawn_of(&mut queue, 300);
        }
        assert_eq!(spawn_run(&queue.queued, 0), (3, 906));
        assert_eq!(spawn_run(&queue.queued[3..], 906), (1, 1208));
        let mut big = ControlQueue::default();
        spawn_of(&mut big, 5000);
        spawn_of(&mut big, 10);
        assert_eq!(spawn_run(&big.queued, 0), (1, 5002));
    }

    #[test]
    fn a_despawn_ends_a_run_of_spawns_and_the_other_way_round() {
        let mut queue = ControlQueue::default();
        spawn_of(&mut queue, 10);
        queue.despawn(5);
        queue.despawn(9);
        spawn_of(&mut queue, 10);
        assert_eq!(spawn_run(&queue.queued, 0), (1, 11));
        assert_eq!(despawn_run(&queue.queued[1..]), 2);
        assert_eq!(spawn_run(&queue.queued[3..], 11), (1, 22));
    }

    #[test]
    fn the_messages_keep_the_order_decided() {
        let mut queue = ControlQueue::default();
        queue.despawn(5);
        spawn_of(&mut queue, 600);
        spawn_of(&mut queue, 600);
        queue.despawn(9);
        queue.parent(|w| w.write_bytes(&[9, 5]));
        queue.despawn(11);
        let kinds: Vec<String> = queue
            .messages()
            .map(|m| match m {
                QueuedMessage::Despawns(ids) => format!("despawn {:?}", ids.collect::<Vec<_>>()),
                QueuedMessage::Spawns(bytes) => format!("spawns of {} bytes", bytes.len()),
                QueuedMessage::Parent(bytes) => format!("move {bytes:?}"),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "despawn [5]",
                "spawns of 602 bytes",
                "spawns of 602 bytes",
                "despawn [9]",
                "move [9, 5]",
                "despawn [11]"
            ]
        );
    }

    #[test]
    fn a_spawn_with_a_string_over_the_limit_is_not_queued() {
        let mut queue = ControlQueue::default();
        let mut scratch = NetWriter::new();
        spawn_of(&mut queue, 10);
        let long = "x".repeat(crate::wire::MAX_STRING_BYTES + 1);
        assert!(!queue.spawn(&mut scratch, |w| w.write_str(&long)));
        assert_eq!(queue.queued.len(), 1);
        assert_eq!(queue.spawns.len(), 11);
        assert!(!queue.spawns.over_limit());
    }
}

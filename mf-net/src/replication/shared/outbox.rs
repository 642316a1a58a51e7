//! [`Outbox`]: the bus as both halves of the runtime send through it.

use crate::bus::{BusCore, MessageBus};
use crate::transport::Transport;

/// The bus as the replication state machine sees it: sending, peers and stats over any
/// transport. Every function of the runtime takes this, not a `BusCore<T>`, so none is
/// generic over the transport; only [`Multiplayer`](crate::replication::Multiplayer) is, and it coerces its bus to this.
pub(crate) type Outbox = BusCore<dyn Transport>;

/// `bus` as an [`Outbox`], if running.
pub(crate) fn outbox<T: Transport + 'static>(
    bus: &mut Option<MessageBus<T>>,
) -> Option<&mut Outbox> {
    bus.as_deref_mut().map(|core| core as &mut Outbox)
}

//! A call of the server to itself (the host's own player, or singleplayer): it runs as a
//! received call would, and what a received call's rejection or failure costs is counted the
//! same way.

use crate::replication::shared::events::MultiplayerEvent;
use crate::replication::shared::state::Shared;
use crate::rpc::{OutgoingRpc, RpcCallError};
use crate::transport::PeerId;

/// A call of the server to itself that `validate` rejected or whose body failed: counted and
/// raised as a remote call's would be.
pub(super) fn count_failure(
    shared: &mut Shared,
    caller: PeerId,
    rpc: OutgoingRpc,
    error: &RpcCallError,
) {
    match error {
        RpcCallError::Rejected => {
            shared.stats.rpcs_rejected += 1;
            shared.events.push(MultiplayerEvent::RpcRejected {
                peer: caller,
                node: rpc.node,
                rpc: rpc.info.name,
            });
        }
        error => {
            shared.stats.rpcs_failed += 1;
            shared.events.push(MultiplayerEvent::RpcFailed {
                peer: caller,
                node: rpc.node,
                rpc: rpc.info.name,
                error: error.clone(),
            });
        }
    }
}

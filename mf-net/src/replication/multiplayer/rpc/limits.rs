//! Per-client RPC accounting on the server: the flood window (the `rpc_flood_threshold` of
//! [`MultiplayerConfig`](crate::replication::MultiplayerConfig)) and each RPC's `rate_limit`
//! window.

use std::time::Duration;

use crate::replication::server::flood::FloodWindow;
use crate::rpc::RpcInfo;

const ONE_SECOND: Duration = Duration::from_secs(1);

/// Per-connection RPC accounting on the server (in each client slot): the flood window and one
/// window per rate-limited RPC.
#[derive(Debug, Default)]
pub(crate) struct PeerRpcState {
    flood: FloodWindow,
    limits: Vec<RateWindow>,
}

#[derive(Debug, Clone, Copy)]
struct RateWindow {
    rpc: &'static RpcInfo,
    start: Duration,
    calls: u32,
}

impl PeerRpcState {
    /// Counts one RPC message; `true` if the client is over `threshold` per second (0: never).
    pub(crate) fn flooding(&mut self, now: Duration, threshold: u32) -> bool {
        self.flood.flooding(now, threshold)
    }

    /// Whether one more call of `rpc` fits `limit` calls in the current one-second window (a
    /// window starts with the first call after the previous one ended).
    pub(crate) fn allow(&mut self, rpc: &'static RpcInfo, limit: u32, now: Duration) -> bool {
        let index = match self.limits.iter().position(|w| std::ptr::eq(w.rpc, rpc)) {
            Some(index) => index,
            None => {
                self.limits.push(RateWindow {
                    rpc,
                    start: now,
                    calls: 0,
                });
                self.limits.len() - 1
            }
        };
        let window = &mut self.limits[index];
        if window.calls == 0 || now.saturating_sub(window.start) >= ONE_SECOND {
            window.start = now;
            window.calls = 0;
        }
        if window.calls < limit {
            window.calls += 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpc::{RpcCallError, RpcContext};
    use crate::wire::NetReader;

    fn none(
        _: &mut dyn std::any::Any,
        _: &mut RpcContext,
        _: &mut NetReader<'_>,
    ) -> Result<(), RpcCallError> {
        Ok(())
    }

    static INFO: RpcInfo = RpcInfo {
        name: "x",
        mode: crate::rpc::RpcMode::AnyPeer,
        call_local: false,
        reliable: true,
        rate_limit: Some(3),
        validate: None,
        params: &[],
        dispatch: none,
        read_args: None,
    };

    #[test]
    fn rate_windows_hold_limit_calls_per_second() {
        let info = &INFO;
        let mut peer = PeerRpcState::default();
        let t = Duration::from_millis;
        let allowed = (0..10).filter(|_| peer.allow(info, 3, t(100))).count();
        assert_eq!(allowed, 3);
        assert!(!peer.allow(info, 3, t(1099)));
        assert!(peer.allow(info, 3, t(1100)));
        assert!(!peer.flooding(t(0), 2) && !peer.flooding(t(0), 2) && peer.flooding(t(0), 2));
        assert!(!peer.flooding(t(1000), 2));
        assert!(!peer.flooding(t(5), 0));
    }
}

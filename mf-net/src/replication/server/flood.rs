//! [`FloodWindow`]: how many messages of one kind a client sent within a second of passed-in
//! time, for the server's flood limits (RPCs:
//! [`rpc_flood_threshold`](crate::replication::multiplayer::MultiplayerConfig::rpc_flood_threshold); inputs:
//! [`input_flood_threshold`](crate::replication::multiplayer::MultiplayerConfig::input_flood_threshold)).

use std::time::Duration;

const ONE_SECOND: Duration = Duration::from_secs(1);

/// Counts one client's messages of one kind per one-second window (a window starts with the
/// first message after the previous one ended).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FloodWindow {
    start: Duration,
    count: u32,
}

impl FloodWindow {
    /// Counts one message at `now`; `true` if the client is over `threshold` per second (0:
    /// never).
    pub(crate) fn flooding(&mut self, now: Duration, threshold: u32) -> bool {
        if self.count == 0 || now.saturating_sub(self.start) >= ONE_SECOND {
            self.start = now;
            self.count = 0;
        }
        self.count = self.count.saturating_add(1);
        threshold > 0 && self.count > threshold
    }
}

#[cfg(test)]
mod tests {
    use super::FloodWindow;
    use std::time::Duration;

    #[test]
    fn a_window_holds_threshold_messages_per_second() {
        let t = Duration::from_millis;
        let mut w = FloodWindow::default();
        assert!(!w.flooding(t(0), 2) && !w.flooding(t(0), 2) && w.flooding(t(0), 2));
        assert!(!w.flooding(t(1000), 2));
        assert!(!w.flooding(t(5), 0));
    }
}

//! [`InterpolationConfig`] and [`AdaptiveDelayConfig`].

use std::time::Duration;

/// How a client shows interpolated members.
///
/// ```
/// use std::time::Duration;
/// use mf_net::interpolation::{AdaptiveDelayConfig, InterpolationConfig};
///
/// let config = InterpolationConfig {
///     adaptive: Some(AdaptiveDelayConfig::default()),
///     ..InterpolationConfig::default()
/// };
/// assert!(config.enabled);
/// assert_eq!(config.delay, Duration::from_millis(100));
/// assert_eq!(config.max_extrapolation, Duration::from_millis(250));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InterpolationConfig {
    /// Whether `#[replicated(interpolate)]` members are blended. `false` snaps every member to
    /// each snapshot's value as it is applied (no delay, no buffers).
    pub enabled: bool,
    /// How far behind the estimated server tick interpolated members are shown
    /// ([`DEFAULT_DELAY`](Self::DEFAULT_DELAY): 0.1 s, about three snapshots at 30 Hz). The
    /// starting delay when [`adaptive`](Self::adaptive) is set.
    pub delay: Duration,
    /// How long a member keeps moving along its last velocity when data is late, before it
    /// stops ([`DEFAULT_MAX_EXTRAPOLATION`](Self::DEFAULT_MAX_EXTRAPOLATION): 0.25 s).
    pub max_extrapolation: Duration,
    /// When set, the delay follows the observed spacing and jitter of snapshot arrivals
    /// within these bounds ([`AdaptiveDelay`](super::AdaptiveDelay)) instead of staying at
    /// [`delay`](Self::delay).
    pub adaptive: Option<AdaptiveDelayConfig>,
}

impl InterpolationConfig {
    /// The default [`delay`](Self::delay): 0.1 s.
    pub const DEFAULT_DELAY: Duration = Duration::from_millis(100);
    /// The default [`max_extrapolation`](Self::max_extrapolation): 0.25 s.
    pub const DEFAULT_MAX_EXTRAPOLATION: Duration = Duration::from_millis(250);

    /// No interpolation: every snapshot snaps (the other fields keep their defaults).
    pub const fn disabled() -> Self {
        Self {
            enabled: false,
            ..Self::DEFAULT
        }
    }

    /// The defaults, as a constant.
    const DEFAULT: Self = Self {
        enabled: true,
        delay: Self::DEFAULT_DELAY,
        max_extrapolation: Self::DEFAULT_MAX_EXTRAPOLATION,
        adaptive: None,
    };
}

impl Default for InterpolationConfig {
    /// Enabled, 0.1 s of delay, at most 0.25 s of extrapolation, fixed delay.
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The bounds and weights of an [`AdaptiveDelay`](super::AdaptiveDelay): the delay aims at
/// `intervals × mean arrival interval + jitter_factor × jitter` (the standard deviation of the
/// intervals), clamped to `min..=max`.
///
/// ```
/// use std::time::Duration;
/// use mf_net::interpolation::AdaptiveDelayConfig;
///
/// let wide = AdaptiveDelayConfig {
///     max: Duration::from_secs(1),
///     ..AdaptiveDelayConfig::default()
/// };
/// assert_eq!(wide.min, Duration::from_millis(50));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveDelayConfig {
    /// The smallest delay (default 50 ms).
    pub min: Duration,
    /// The largest delay (default 500 ms). A `max` below `min` counts as `min`.
    pub max: Duration,
    /// How many mean arrival intervals to buffer (default 3).
    pub intervals: f64,
    /// How many standard deviations of the arrival intervals to add (default 2).
    pub jitter_factor: f64,
}

impl AdaptiveDelayConfig {
    /// The default [`min`](Self::min): 50 ms.
    pub const DEFAULT_MIN: Duration = Duration::from_millis(50);
    /// The default [`max`](Self::max): 500 ms.
    pub const DEFAULT_MAX: Duration = Duration::from_millis(500);
}

impl Default for AdaptiveDelayConfig {
    /// 50 ms to 500 ms, three intervals plus two standard deviations.
    fn default() -> Self {
        Self {
            min: Self::DEFAULT_MIN,
            max: Self::DEFAULT_MAX,
            intervals: 3.0,
            jitter_factor: 2.0,
        }
    }
}

//! The server's half of the runtime.

pub(crate) mod shadow_column;
pub(crate) mod shadows;

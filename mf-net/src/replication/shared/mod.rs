//! What the server's and the client's halves of the runtime both use, and neither owns.

pub(crate) mod columns;

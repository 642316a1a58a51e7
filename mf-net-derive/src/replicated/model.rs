//! What `#[derive(Replicated)]` checks and expands.

use syn::{Ident, LitStr};

use super::parse::Field;

/// What the expansion needs: a checked struct with named fields.
pub(crate) struct Model {
    pub(crate) ident: Ident,
    pub(crate) name: Option<LitStr>,
    pub(crate) fields: Vec<Field>,
}

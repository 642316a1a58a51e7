//! In-process transport (placeholder).

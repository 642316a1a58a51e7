//! Bad-network decorator (placeholder).

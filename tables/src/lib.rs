//! Tidy tables and the batch layer.

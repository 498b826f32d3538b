//! memscape GPU renderer.

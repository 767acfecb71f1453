//! scry-text

//! scry-render

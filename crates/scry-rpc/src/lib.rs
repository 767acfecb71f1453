//! scry-rpc

//! scry-rpc: a JSON-RPC 2.0 transport over stdio for the Language Server Protocol.
//!
//! * [`framing`] reads and writes `Content-Length`-framed messages, leniently:
//!   headers in any order and any case, `Content-Type` ignored, `\r\n` or bare
//!   `\n` line ends, junk lines on the server's stdout skipped with a warning.
//! * [`connection`] matches requests with responses, dispatches server requests
//!   and notifications to a [`Handler`], and cancels abandoned requests.
//!
//! # Invariants
//!
//! * Content-Length is always a byte count; bodies are read exactly, however
//!   the bytes are split or coalesced by the pipe.
//! * A body that is not valid JSON is consumed and skipped: the stream stays in
//!   sync. Every other read error (end of stream mid-message, a body over
//!   [`ConnectionOptions::max_message_len`], an unreadable `Content-Length`,
//!   an I/O error) is fatal and closes the connection.
//! * Outgoing request ids are increasing integers from 1. Incoming ids (number
//!   or string) are echoed back unchanged.
//! * Every outgoing message carries `"jsonrpc": "2.0"`; `params: None` omits
//!   the `params` member instead of sending `null`.
//! * All writes go through one writer task, in the order they were issued, so
//!   [`Connection::notify`] is synchronous and never blocks.
//! * When the connection closes (end of stream, fatal read error, failed
//!   write), every pending request fails at once with [`RpcError::Closed`],
//!   naming the server and the method, and every later request or
//!   notification fails immediately.
//! * Dropping a [`Connection::request`] future before its response arrives
//!   removes the pending entry and sends `$/cancelRequest` with its id; a late
//!   response for it is logged and ignored.
//! * A panicking [`Handler`] does not stop the reader; a panicking request
//!   handler is answered with an internal error (-32603).
//! * Library code never prints to stdout; diagnostics go through `tracing`.

pub mod connection;
pub mod framing;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;

pub use connection::{
    Connection, ConnectionOptions, DeferredReply, Handler, RequestId, ResponseError, RpcError,
};
pub use framing::{FramingError, read_message, write_message};

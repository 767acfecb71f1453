//! The subset of SCIP's `scip.proto` scry reads, as hand-written `prost`
//! messages (no `protoc`, no build script), and a streaming reader of an
//! `index.scip` that yields one top-level field at a time.
//!
//! Field numbers are those of the published `scip.proto` (Sourcegraph,
//! `scip/scip.proto`); fields scry does not read are skipped by prost as
//! unknown. Invariants: the reader never holds more than one document's
//! bytes (a field over [`MAX_FIELD_BYTES`] is refused, not allocated); a
//! file that ends inside a field is [`StreamError::Truncated`], never a
//! shorter index taken as whole.

use std::io::{self, Read};

/// The largest single top-level field (one document) read.
pub const MAX_FIELD_BYTES: u64 = 64 * 1024 * 1024;

/// A whole `index.scip` (`scip.proto`'s `Index` message). scry never
/// decodes one whole (it streams [`Field`]s); tests and tools write one.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ScipIndex {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<Metadata>,
    #[prost(message, repeated, tag = "2")]
    pub documents: Vec<Document>,
    #[prost(message, repeated, tag = "3")]
    pub external_symbols: Vec<SymbolInformation>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Metadata {
    /// `ProtocolVersion`: only 0 (`UnspecifiedProtocolVersion`) exists.
    #[prost(int32, tag = "1")]
    pub version: i32,
    #[prost(message, optional, tag = "2")]
    pub tool_info: Option<ToolInfo>,
    #[prost(string, tag = "3")]
    pub project_root: String,
    #[prost(int32, tag = "4")]
    pub text_document_encoding: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ToolInfo {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub version: String,
    #[prost(string, repeated, tag = "3")]
    pub arguments: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Document {
    #[prost(string, tag = "1")]
    pub relative_path: String,
    #[prost(message, repeated, tag = "2")]
    pub occurrences: Vec<Occurrence>,
    #[prost(message, repeated, tag = "3")]
    pub symbols: Vec<SymbolInformation>,
    #[prost(string, tag = "4")]
    pub language: String,
    #[prost(string, tag = "5")]
    pub text: String,
    /// `PositionEncoding`: 0 unspecified, 1 UTF-8, 2 UTF-16, 3 UTF-32 code
    /// units from the line start.
    #[prost(int32, tag = "6")]
    pub position_encoding: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Occurrence {
    /// `[line, start, end]` or `[start_line, start, end_line, end]`, 0-based.
    #[prost(int32, repeated, tag = "1")]
    pub range: Vec<i32>,
    #[prost(string, tag = "2")]
    pub symbol: String,
    /// `SymbolRole` bits.
    #[prost(int32, tag = "3")]
    pub symbol_roles: i32,
    #[prost(string, repeated, tag = "4")]
    pub override_documentation: Vec<String>,
    #[prost(int32, repeated, tag = "7")]
    pub enclosing_range: Vec<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SymbolInformation {
    #[prost(string, tag = "1")]
    pub symbol: String,
    #[prost(string, repeated, tag = "3")]
    pub documentation: Vec<String>,
    #[prost(message, repeated, tag = "4")]
    pub relationships: Vec<Relationship>,
    #[prost(int32, tag = "5")]
    pub kind: i32,
    #[prost(string, tag = "6")]
    pub display_name: String,
    #[prost(message, optional, tag = "7")]
    pub signature_documentation: Option<Document>,
    #[prost(string, tag = "8")]
    pub enclosing_symbol: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Relationship {
    #[prost(string, tag = "1")]
    pub symbol: String,
    #[prost(bool, tag = "2")]
    pub is_reference: bool,
    #[prost(bool, tag = "3")]
    pub is_implementation: bool,
    #[prost(bool, tag = "4")]
    pub is_type_definition: bool,
    #[prost(bool, tag = "5")]
    pub is_definition: bool,
}

/// `SymbolRole.Definition`.
pub const ROLE_DEFINITION: i32 = 1;

/// One top-level field of a [`ScipIndex`].
#[derive(Debug)]
pub enum Field {
    Metadata(Metadata),
    Document(Document),
    ExternalSymbol(SymbolInformation),
}

#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("read failed: {0}")]
    Io(#[from] io::Error),
    #[error("the file ends inside a field (truncated)")]
    Truncated,
    #[error("not a SCIP index: {0}")]
    Corrupt(String),
}

/// Reads a [`ScipIndex`] one top-level field at a time.
pub struct Stream<R> {
    r: R,
    /// Bytes consumed so far (for messages).
    pub offset: u64,
}

impl<R: Read> Stream<R> {
    pub fn new(r: R) -> Stream<R> {
        Stream { r, offset: 0 }
    }

    /// A varint; `Ok(None)` at a clean end of file before its first byte.
    fn varint(&mut self, first: bool) -> Result<Option<u64>, StreamError> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let mut b = [0u8; 1];
            match self.r.read(&mut b)? {
                0 if i == 0 && first => return Ok(None),
                0 => return Err(StreamError::Truncated),
                _ => {}
            }
            self.offset += 1;
            v |= ((b[0] & 0x7f) as u64) << (7 * i);
            if b[0] & 0x80 == 0 {
                return Ok(Some(v));
            }
        }
        Err(StreamError::Corrupt(format!(
            "varint over 10 bytes at byte {}",
            self.offset
        )))
    }

    fn bytes(&mut self, n: u64) -> Result<Vec<u8>, StreamError> {
        if n > MAX_FIELD_BYTES {
            return Err(StreamError::Corrupt(format!(
                "a field of {n} bytes at byte {} (over {MAX_FIELD_BYTES})",
                self.offset
            )));
        }
        let mut buf = Vec::new();
        let got = (&mut self.r).take(n).read_to_end(&mut buf)? as u64;
        self.offset += got;
        if got < n {
            return Err(StreamError::Truncated);
        }
        Ok(buf)
    }

    /// The next top-level field scry reads; unknown fields are skipped.
    pub fn next_field(&mut self) -> Result<Option<Field>, StreamError> {
        loop {
            let Some(key) = self.varint(true)? else {
                return Ok(None);
            };
            let (tag, wire) = (key >> 3, key & 7);
            let corrupt = |m: &str| StreamError::Corrupt(m.to_string());
            match wire {
                2 => {
                    let n = self.varint(false)?.ok_or(StreamError::Truncated)?;
                    let buf = self.bytes(n)?;
                    let bad = |e: prost::DecodeError| {
                        StreamError::Corrupt(format!("field {tag} does not decode: {e}"))
                    };
                    use prost::Message;
                    match tag {
                        1 => {
                            return Ok(Some(Field::Metadata(
                                Metadata::decode(&buf[..]).map_err(bad)?,
                            )));
                        }
                        2 => {
                            return Ok(Some(Field::Document(
                                Document::decode(&buf[..]).map_err(bad)?,
                            )));
                        }
                        3 => {
                            return Ok(Some(Field::ExternalSymbol(
                                SymbolInformation::decode(&buf[..]).map_err(bad)?,
                            )));
                        }
                        0 => return Err(corrupt("field number 0")),
                        _ => {}
                    }
                }
                0 => {
                    self.varint(false)?.ok_or(StreamError::Truncated)?;
                }
                1 => {
                    self.bytes(8)?;
                }
                5 => {
                    self.bytes(4)?;
                }
                _ => {
                    return Err(StreamError::Corrupt(format!(
                        "wire type {wire} at byte {}",
                        self.offset
                    )));
                }
            }
            if tag == 0 {
                return Err(corrupt("field number 0"));
            }
        }
    }
}

//! The subset of SCIP's `scip.proto` scry reads, as hand-written `prost`
//! messages (no `protoc`, no build script), and a streaming reader of an
//! `index.scip` that yields one top-level field's bytes at a time, and a document
//! read in place ([`DocumentView`]) without decoding it whole.
//!
//! Field numbers are those of the published `scip.proto` (Sourcegraph,
//! `scip/scip.proto`); fields scry does not read are skipped by prost as
//! unknown. Invariants: the reader never holds more than one document's
//! bytes (a field over [`MAX_FIELD_BYTES`], or over the room its caller
//! gives, is refused before it is allocated); a file that ends inside a
//! field is [`StreamError::Truncated`], never a shorter index taken as
//! whole. A [`DocumentView`] borrows its strings from the field's bytes and
//! validates them (UTF-8, well-formed fields) once, when parsed: a decoded
//! `Document` takes about eight times its encoded size, the view a few
//! words.

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

#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("read failed: {0}")]
    Io(#[from] io::Error),
    #[error("the file ends inside a field (truncated)")]
    Truncated,
    #[error("not a SCIP index: {0}")]
    Corrupt(String),
    /// A field larger than the room the caller gave ([`Stream::next_raw`]):
    /// its size in bytes.
    #[error("a field of {0} bytes is over the room left")]
    NoRoom(u64),
}

/// Reads a [`ScipIndex`] one top-level field at a time ([`Stream::next_raw`]).
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
        // Exactly its size: grown by doubling, a field could take twice it.
        let mut buf = Vec::with_capacity(n as usize);
        let got = (&mut self.r).take(n).read_to_end(&mut buf)? as u64;
        self.offset += got;
        if got < n {
            return Err(StreamError::Truncated);
        }
        Ok(buf)
    }

    /// The next top-level field scry reads, undecoded: (field number, its
    /// bytes); unknown fields are skipped. A length-delimited field over
    /// `room` bytes is [`StreamError::NoRoom`], refused before it is read.
    pub fn next_raw(&mut self, room: u64) -> Result<Option<(u64, Vec<u8>)>, StreamError> {
        loop {
            let Some(key) = self.varint(true)? else {
                return Ok(None);
            };
            let (tag, wire) = (key >> 3, key & 7);
            if tag == 0 {
                return Err(StreamError::Corrupt("field number 0".into()));
            }
            match wire {
                2 => {
                    let n = self.varint(false)?.ok_or(StreamError::Truncated)?;
                    if (1..=3).contains(&tag) {
                        if n > room && n <= MAX_FIELD_BYTES {
                            return Err(StreamError::NoRoom(n));
                        }
                        return Ok(Some((tag, self.bytes(n)?)));
                    }
                    self.skip(n)?;
                }
                0 => {
                    self.varint(false)?.ok_or(StreamError::Truncated)?;
                }
                1 => self.skip(8)?,
                5 => self.skip(4)?,
                _ => {
                    return Err(StreamError::Corrupt(format!(
                        "wire type {wire} at byte {}",
                        self.offset
                    )));
                }
            }
        }
    }

    /// Skip `n` bytes, never holding them.
    fn skip(&mut self, n: u64) -> Result<(), StreamError> {
        let got = io::copy(&mut (&mut self.r).take(n), &mut io::sink())?;
        self.offset += got;
        if got < n {
            return Err(StreamError::Truncated);
        }
        Ok(())
    }
}

/// A field of a message read in place: a varint (or fixed-width number),
/// or the bytes of a length-delimited field.
enum Value<'a> {
    Number(u64),
    Bytes(&'a [u8]),
}

/// The fields of one message's bytes, in order, each borrowed.
struct Fields<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    fn new(buf: &'a [u8]) -> Fields<'a> {
        Fields { buf, at: 0 }
    }

    fn varint(&mut self) -> Result<u64, StreamError> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.at) else {
                return Err(StreamError::Corrupt(
                    "a message ends inside a number".into(),
                ));
            };
            self.at += 1;
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(StreamError::Corrupt("a varint over 10 bytes".into()))
    }

    fn take(&mut self, n: u64) -> Result<&'a [u8], StreamError> {
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.at.checked_add(n))
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| StreamError::Corrupt("a field runs past its message".into()))?;
        let b = &self.buf[self.at..end];
        self.at = end;
        Ok(b)
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>), StreamError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.buf.len() {
            return None;
        }
        let r = (|| {
            let key = self.varint()?;
            let (tag, wire) = (key >> 3, key & 7);
            if tag == 0 {
                return Err(StreamError::Corrupt("field number 0".into()));
            }
            let v = match wire {
                0 => Value::Number(self.varint()?),
                1 => Value::Number(u64::from_le_bytes(
                    self.take(8)?.try_into().unwrap_or_default(),
                )),
                5 => Value::Number(
                    u32::from_le_bytes(self.take(4)?.try_into().unwrap_or_default()) as u64,
                ),
                2 => {
                    let n = self.varint()?;
                    Value::Bytes(self.take(n)?)
                }
                w => return Err(StreamError::Corrupt(format!("wire type {w} in a message"))),
            };
            Ok((tag, v))
        })();
        if r.is_err() {
            self.at = self.buf.len();
        }
        Some(r)
    }
}

fn utf8(b: &[u8]) -> Result<&str, StreamError> {
    std::str::from_utf8(b).map_err(|_| StreamError::Corrupt("a string is not UTF-8".into()))
}

/// Up to four `int32`s of a repeated field (a range); `len` 5: more.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ints {
    vals: [i32; 4],
    len: u8,
}

impl Ints {
    fn push(&mut self, v: u64) {
        if (self.len as usize) < 4 {
            self.vals[self.len as usize] = v as i32;
        }
        self.len = (self.len + 1).min(5);
    }

    fn read(&mut self, v: Value<'_>) -> Result<(), StreamError> {
        match v {
            Value::Number(n) => self.push(n),
            Value::Bytes(b) => {
                let mut f = Fields::new(b);
                while f.at < b.len() {
                    self.push(f.varint()?);
                }
            }
        }
        Ok(())
    }

    /// The numbers; more than four read as an impossible range (five).
    pub fn as_slice(&self) -> &[i32] {
        match self.len {
            0..=4 => &self.vals[..self.len as usize],
            _ => &[0, 0, 0, 0, 0][..],
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One occurrence of a [`DocumentView`], read in place.
#[derive(Debug, Default, PartialEq)]
pub struct OccurrenceView<'a> {
    pub range: Ints,
    pub symbol: &'a str,
    pub symbol_roles: i32,
    pub enclosing_range: Ints,
}

impl<'a> OccurrenceView<'a> {
    fn parse(b: &'a [u8]) -> Result<OccurrenceView<'a>, StreamError> {
        let mut o = OccurrenceView::default();
        for f in Fields::new(b) {
            match f? {
                (1, v) => o.range.read(v)?,
                (2, Value::Bytes(s)) => o.symbol = utf8(s)?,
                (3, Value::Number(n)) => o.symbol_roles = n as i32,
                (7, v) => o.enclosing_range.read(v)?,
                (2 | 3, _) => {
                    return Err(StreamError::Corrupt(
                        "an occurrence's field of the wrong type".into(),
                    ));
                }
                _ => {}
            }
        }
        Ok(o)
    }
}

/// A `Document` read in place from its field's bytes: its strings
/// borrowed, its occurrences parsed one at a time
/// ([`DocumentView::occurrences`]), its symbols decoded one at a time
/// ([`DocumentView::symbols`]). [`DocumentView::parse`] validates it
/// whole, so iterating it cannot fail but for a symbol that does not
/// decode.
pub struct DocumentView<'a> {
    pub relative_path: &'a str,
    pub language: &'a str,
    pub position_encoding: i32,
    /// How many occurrences name a symbol.
    pub named_occurrences: usize,
    /// The bytes of the symbols' names those occurrences hold.
    pub symbol_bytes: usize,
    /// How many symbols' information it holds.
    pub symbols: usize,
    /// The bytes of those symbols' names.
    pub symbol_info_bytes: usize,
    bytes: &'a [u8],
}

impl<'a> DocumentView<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<DocumentView<'a>, StreamError> {
        let mut d = DocumentView {
            relative_path: "",
            language: "",
            position_encoding: 0,
            named_occurrences: 0,
            symbol_bytes: 0,
            symbols: 0,
            symbol_info_bytes: 0,
            bytes,
        };
        for f in Fields::new(bytes) {
            match f? {
                (1, Value::Bytes(s)) => d.relative_path = utf8(s)?,
                (2, Value::Bytes(o)) => {
                    let o = OccurrenceView::parse(o)?;
                    if !o.symbol.is_empty() {
                        d.named_occurrences += 1;
                        d.symbol_bytes += o.symbol.len();
                    }
                }
                (3, Value::Bytes(si)) => {
                    d.symbols += 1;
                    for f in Fields::new(si) {
                        if let (1, Value::Bytes(name)) = f? {
                            d.symbol_info_bytes += name.len();
                        }
                    }
                }
                (4, Value::Bytes(s)) => d.language = utf8(s)?,
                (5, Value::Bytes(s)) => {
                    utf8(s)?;
                }
                (6, Value::Number(n)) => d.position_encoding = n as i32,
                (1..=6, _) => {
                    return Err(StreamError::Corrupt(
                        "a document's field of the wrong type".into(),
                    ));
                }
                _ => {}
            }
        }
        Ok(d)
    }

    /// Its occurrences, in order (validated by [`DocumentView::parse`]).
    pub fn occurrences(&self) -> impl Iterator<Item = OccurrenceView<'a>> + 'a {
        Fields::new(self.bytes).filter_map(|f| match f.ok()? {
            (2, Value::Bytes(o)) => OccurrenceView::parse(o).ok(),
            _ => None,
        })
    }

    /// Its symbols' information, decoded one at a time.
    pub fn symbols(&self) -> impl Iterator<Item = Result<SymbolInformation, StreamError>> + 'a {
        use prost::Message;
        Fields::new(self.bytes).filter_map(|f| match f.ok()? {
            (3, Value::Bytes(s)) => Some(SymbolInformation::decode(s).map_err(|e| {
                StreamError::Corrupt(format!("a document's symbol does not decode: {e}"))
            })),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    fn occ(range: Vec<i32>, symbol: &str, enclosing: Vec<i32>) -> Occurrence {
        Occurrence {
            range,
            symbol: symbol.into(),
            symbol_roles: 1,
            enclosing_range: enclosing,
            ..Default::default()
        }
    }

    #[test]
    fn a_document_read_in_place_says_what_decoding_it_says() {
        let d = Document {
            relative_path: "src/a.rs".into(),
            language: "rust".into(),
            position_encoding: 2,
            occurrences: vec![
                occ(vec![1, 2, 3], "a", vec![]),
                occ(vec![0, -1, 4, 5], "", vec![0, 0, 9, 1]),
                occ(vec![1, 2, 3, 4, 5], "local 7", vec![1, 0, 2, 0]),
            ],
            symbols: vec![SymbolInformation {
                symbol: "a".into(),
                display_name: "A".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let bytes = d.encode_to_vec();
        let v = DocumentView::parse(&bytes).unwrap();
        assert_eq!(
            (v.relative_path, v.language, v.position_encoding),
            ("src/a.rs", "rust", 2)
        );
        assert_eq!((v.named_occurrences, v.symbol_bytes, v.symbols), (2, 8, 1));
        let occs: Vec<OccurrenceView<'_>> = v.occurrences().collect();
        assert_eq!(occs.len(), 3);
        for (o, want) in occs.iter().zip(&d.occurrences) {
            assert_eq!(o.symbol, want.symbol);
            assert_eq!(o.symbol_roles, want.symbol_roles);
            if want.range.len() <= 4 {
                assert_eq!(o.range.as_slice(), &want.range[..]);
            } else {
                assert_eq!(o.range.as_slice().len(), 5, "more than four: no range");
            }
            assert_eq!(o.enclosing_range.as_slice(), &want.enclosing_range[..]);
        }
        let symbols: Vec<SymbolInformation> = v.symbols().map(Result::unwrap).collect();
        assert_eq!(symbols, d.symbols);
    }

    #[test]
    fn a_malformed_document_is_refused_when_parsed() {
        // A range written unpacked is read as packed is.
        let mut unpacked = Vec::new();
        for v in [3u64, 4, 5] {
            prost::encoding::encode_varint(1 << 3, &mut unpacked);
            prost::encoding::encode_varint(v, &mut unpacked);
        }
        prost::encoding::string::encode(2, &"s".to_string(), &mut unpacked);
        let mut doc = Vec::new();
        prost::encoding::bytes::encode(2, &unpacked, &mut doc);
        let v = DocumentView::parse(&doc).unwrap();
        let o = v.occurrences().next().unwrap();
        assert_eq!((o.range.as_slice(), o.symbol), (&[3, 4, 5][..], "s"));
        // A symbol that is not UTF-8, a field past its end, a truncated
        // number: errors, never a shorter document.
        let mut bad_utf8 = Vec::new();
        prost::encoding::bytes::encode(2, &vec![0xff, 0xfe], &mut bad_utf8);
        let mut doc = Vec::new();
        prost::encoding::bytes::encode(2, &bad_utf8, &mut doc);
        assert!(DocumentView::parse(&doc).is_err());
        assert!(DocumentView::parse(&[0x12, 0x05, 0x0a]).is_err());
        assert!(DocumentView::parse(&[0x30, 0xff]).is_err());
        assert!(
            DocumentView::parse(&[0x00, 0x01]).is_err(),
            "field number 0"
        );
    }
}

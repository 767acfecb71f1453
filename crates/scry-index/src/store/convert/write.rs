//! The tables written out ([`tables`]): section by section in
//! [`crate::store::format`]'s layout, straight from what the conversion
//! holds, through a buffered writer into a temporary file beside the
//! output, flushed to disk and renamed over it.
//!
//! Invariants: a reader never sees half a file, and a failure leaves the
//! old one; the header's (offset, count) of each section are those of what
//! follows it ([`sections`] counts what the writers write).

use std::fs::File;
use std::io::Write;
use std::path::Path;

use super::tables::Tables;
use crate::store::format::{
    DOC_BYTES, EXTENT_BYTES, FORMAT_VERSION, HEADER_BYTES, MAGIC, NAME_BYTES, OCC_BYTES, SECTIONS,
    SYM_BYTES, put_occ,
};

/// Write `t`, then the metadata's JSON `meta`, to `out`.
pub(super) fn tables(out: &Path, t: &Tables, meta: &[u8]) -> std::io::Result<()> {
    let lens = sections(t, meta.len() as u64);
    write_atomically(out, |f| {
        header(f, &lens)?;
        documents(f, t)?;
        occurrences(f, t)?;
        symbols(f, t)?;
        names(f, t)?;
        by_symbol(f, t)?;
        strings(f, t)?;
        infos_implementors_extents(f, t)?;
        f.write_all(meta)
    })
}

/// The documents' paths' bytes: the start of the string blob.
fn paths_len(t: &Tables) -> u64 {
    t.docs.iter().map(|d| d.path.len() as u64).sum()
}

/// Each section's (bytes, count), in the header's order.
fn sections(t: &Tables, meta_len: u64) -> [(u64, u64); SECTIONS] {
    let docs = &t.docs;
    let nsyms = t.keys.len();
    let occ_total: u64 = docs.iter().map(|d| d.occs.len() as u64).sum();
    let paths_len = paths_len(t);
    let blob_len: u64 = (0..nsyms as u32)
        .map(|k| t.infos.info(k).len() as u64)
        .sum();
    let extents_n: u64 = docs.iter().map(|d| d.extents.len() as u64).sum();
    let strings = paths_len + t.keys.bytes.len() as u64 + t.names.bytes.len() as u64;
    let names = t.names.rows.len() as u64;
    [
        (docs.len() as u64 * DOC_BYTES, docs.len() as u64),
        (occ_total * OCC_BYTES, occ_total),
        (nsyms as u64 * SYM_BYTES, nsyms as u64),
        (names * NAME_BYTES, names),
        (t.bysym.len() as u64 * OCC_BYTES, t.bysym.len() as u64),
        (strings, strings),
        (blob_len, blob_len),
        (t.implementors.len() as u64 * 4, t.implementors.len() as u64),
        (extents_n * EXTENT_BYTES, extents_n),
        (meta_len, meta_len),
    ]
}

/// The magic, the format version, and each section's (offset, count).
fn header(f: &mut dyn Write, lens: &[(u64, u64); SECTIONS]) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(HEADER_BYTES as usize);
    head.extend(MAGIC);
    head.extend(FORMAT_VERSION.to_le_bytes());
    head.extend(0u32.to_le_bytes());
    let mut off = HEADER_BYTES;
    for (bytes, count) in lens {
        head.extend(off.to_le_bytes());
        head.extend(count.to_le_bytes());
        off += bytes;
    }
    f.write_all(&head)
}

/// Documents, in path order.
fn documents(f: &mut dyn Write, t: &Tables) -> std::io::Result<()> {
    let (mut path_off, mut occ_off) = (0u64, 0u64);
    for d in &t.docs {
        let mut rec = Vec::with_capacity(DOC_BYTES as usize);
        rec.extend(path_off.to_le_bytes());
        rec.extend((d.path.len() as u32).to_le_bytes());
        rec.extend((u32::from(d.verified) | (d.lang << 1)).to_le_bytes());
        rec.extend(d.hash.to_le_bytes());
        rec.extend(d.size.to_le_bytes());
        rec.extend(d.mtime_ns.to_le_bytes());
        rec.extend(occ_off.to_le_bytes());
        rec.extend((d.occs.len() as u32).to_le_bytes());
        rec.extend(0u32.to_le_bytes());
        rec.extend(d.ctime_ns.to_le_bytes());
        rec.extend(d.ino.to_le_bytes());
        f.write_all(&rec)?;
        path_off += d.path.len() as u64;
        occ_off += d.occs.len() as u64 * OCC_BYTES;
    }
    Ok(())
}

/// Occurrences, by document.
fn occurrences(f: &mut dyn Write, t: &Tables) -> std::io::Result<()> {
    for d in &t.docs {
        for &(l, c, el, ec, k, r) in &d.occs {
            put_occ(f, l, c, el, ec, t.id_of[k as usize], r)?;
        }
    }
    Ok(())
}

/// Symbols, in id order: each one's string, occurrences, information and
/// implementors slices.
fn symbols(f: &mut dyn Write, t: &Tables) -> std::io::Result<()> {
    let (mut name_off, mut info_off) = (paths_len(t), 0u64);
    let (mut at, mut imp) = (0usize, 0usize);
    for (id, &k) in t.order.iter().enumerate() {
        let id = id as u32;
        let s = t.keys.get(k);
        let occ_from = at;
        while at < t.bysym.len() && t.bysym[at].0 == id {
            at += 1;
        }
        let imp_from = imp;
        while imp < t.implementors.len() && t.implementors[imp].0 == id {
            imp += 1;
        }
        let info_len = t.infos.info(k).len() as u64;
        let mut rec = Vec::with_capacity(SYM_BYTES as usize);
        rec.extend(name_off.to_le_bytes());
        rec.extend((s.len() as u32).to_le_bytes());
        rec.extend(((at - occ_from) as u32).to_le_bytes());
        rec.extend((occ_from as u64 * OCC_BYTES).to_le_bytes());
        rec.extend(if info_len > 0 { info_off } else { 0 }.to_le_bytes());
        rec.extend((info_len as u32).to_le_bytes());
        rec.extend(((imp - imp_from) as u32).to_le_bytes());
        rec.extend((imp_from as u64 * 4).to_le_bytes());
        f.write_all(&rec)?;
        name_off += s.len() as u64;
        info_off += info_len;
    }
    Ok(())
}

/// Names, in name order: each one's string and symbol id.
fn names(f: &mut dyn Write, t: &Tables) -> std::io::Result<()> {
    let mut off = paths_len(t) + t.keys.bytes.len() as u64;
    for r in &t.names.rows {
        f.write_all(&off.to_le_bytes())?;
        f.write_all(&r.1.to_le_bytes())?;
        f.write_all(&r.2.to_le_bytes())?;
        off += r.1 as u64;
    }
    Ok(())
}

/// Occurrences by symbol.
fn by_symbol(f: &mut dyn Write, t: &Tables) -> std::io::Result<()> {
    for o in &t.bysym {
        let (l, c, el, ec, _, r) = t.row(o);
        put_occ(f, l, c, el, ec, o.1, r)?;
    }
    Ok(())
}

/// Strings: paths, symbols (id order), names (name order).
fn strings(f: &mut dyn Write, t: &Tables) -> std::io::Result<()> {
    for d in &t.docs {
        f.write_all(d.path.as_bytes())?;
    }
    for &k in &t.order {
        f.write_all(t.keys.get(k))?;
    }
    for r in &t.names.rows {
        f.write_all(t.names.of(r))?;
    }
    Ok(())
}

/// Information (id order), implementors, extents (document, then
/// position).
fn infos_implementors_extents(f: &mut dyn Write, t: &Tables) -> std::io::Result<()> {
    for &k in &t.order {
        f.write_all(t.infos.info(k))?;
    }
    for &(_, i) in &t.implementors {
        f.write_all(&i.to_le_bytes())?;
    }
    for (di, d) in t.docs.iter().enumerate() {
        for &(l, c, k, (sl, sc, el, ec)) in &d.extents {
            for n in [di as u32, l, c, t.id_of[k as usize], sl, sc, el, ec] {
                f.write_all(&n.to_le_bytes())?;
            }
        }
    }
    Ok(())
}

/// Write `out` through `write` into a temporary file beside it, flushed to
/// disk, then renamed over it: a reader never sees half a file, and a
/// failure leaves the old one.
fn write_atomically(
    out: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = out.with_extension(format!("tmp{}", std::process::id()));
    let r = (|| {
        let mut f = std::io::BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        write(&mut f)?;
        let f = f.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()
    })();
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, out)
}

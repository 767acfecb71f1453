//! Amounts of memory in words (`512 KiB`, `212.4 MiB`, `2.3 GiB`), defined
//! once for every layer that says one: the memory policy's notes
//! (scry-workspace), status and `daemon status` (scry-render), `doctor`.
//!
//! Invariant: one decimal above KiB, binary units.

/// Memory in words: `512 KiB`, `212.4 MiB`, `2.3 GiB`.
pub fn describe_kib(kib: u64) -> String {
    const MIB: u64 = 1024;
    const GIB: u64 = 1024 * 1024;
    if kib >= GIB {
        format!("{:.1} GiB", kib as f64 / GIB as f64)
    } else if kib >= MIB {
        format!("{:.1} MiB", kib as f64 / MIB as f64)
    } else {
        format!("{kib} KiB")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_reads_in_words() {
        assert_eq!(describe_kib(512), "512 KiB");
        assert_eq!(describe_kib(40 * 1024), "40.0 MiB");
        assert_eq!(describe_kib(2_411_724), "2.3 GiB");
    }
}

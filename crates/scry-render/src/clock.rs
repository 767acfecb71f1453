//! Times and spans in words, the one place they are formatted: a moment as
//! `2026-12-02 00:40 UTC` ([`utc_date`]) or `21:50:03 UTC` ([`clock`]), an
//! age as `12 min` ([`age`]), a process's time up or idle as `3m05s`
//! ([`uptime`]).
//!
//! Invariant: moments are seconds since the Unix epoch, in UTC (no time
//! zone is read); spans are whole units, rounded down.

/// `HH:MM:SS UTC` of a moment (when a memory event happened).
pub(crate) fn clock(at_secs: u64) -> String {
    let day = at_secs % 86_400;
    format!(
        "{:02}:{:02}:{:02} UTC",
        day / 3600,
        (day % 3600) / 60,
        day % 60
    )
}

/// `2026-12-02 00:40 UTC` of a moment (when an index was built).
pub(crate) fn utc_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (h, mi) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02} UTC")
}

/// How long ago, in the largest unit that keeps two figures: `90 s`,
/// `12 min`, `5 h`, `3 days`.
pub(crate) fn age(secs: u64) -> String {
    match secs {
        0..=119 => format!("{secs} s"),
        120..=7199 => format!("{} min", secs / 60),
        7200..=172_799 => format!("{} h", secs / 3600),
        _ => format!("{} days", secs / 86_400),
    }
}

/// A process's time up or idle, compact: `42s`, `3m05s`, `1h02m`.
pub(crate) fn uptime(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_and_spans() {
        assert_eq!(clock(21 * 3600 + 50 * 60 + 3), "21:50:03 UTC");
        assert_eq!(utc_date(0), "1970-01-01 00:00 UTC");
        // 2026-12-02 04:10 UTC; a leap day.
        assert_eq!(utc_date(1_796_184_600), "2026-12-02 04:10 UTC");
        assert_eq!(utc_date(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(age(119), "119 s");
        assert_eq!(age(12 * 60 + 59), "12 min");
        assert_eq!(age(7200), "2 h");
        assert_eq!(age(3 * 86_400), "3 days");
        assert_eq!(uptime(59_999), "59s");
        assert_eq!(uptime(185_000), "3m05s");
        assert_eq!(uptime(3_720_000), "1h02m");
    }
}

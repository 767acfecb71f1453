//! Positions across commits: a file's `git diff -U0` hunks between the
//! index's commit and the working tree ([`Hunks`]), and a line moved
//! through them, as Sourcegraph's `GitTreeTranslator` moves it.
//!
//! Invariants: a line before every hunk is unchanged; one after a hunk
//! moves by what the hunks above it added or removed; one inside a hunk's
//! changed lines does not translate (`None`): its text is not the one
//! the index saw. Character columns are never moved (a line that
//! translates is the same text). Malformed hunk headers make the whole
//! file untranslatable (`Hunks::parse` gives `None`), never a guess.

/// One hunk: `old` lines starting at `old_start`, replaced by `new` lines
/// starting at `new_start` (1-based, as `@@ -a,b +c,d @@` writes them; a
/// start with a count of 0 names the line *before* the gap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
}

impl Hunk {
    /// The changed span on the old side, 1-based and half-open.
    fn old_span(&self) -> (u32, u32) {
        span(self.old_start, self.old_lines)
    }

    /// The changed span on the new side, 1-based and half-open.
    fn new_span(&self) -> (u32, u32) {
        span(self.new_start, self.new_lines)
    }
}

fn span(start: u32, lines: u32) -> (u32, u32) {
    let begin = if lines == 0 { start + 1 } else { start };
    (begin, begin + lines)
}

/// A file's hunks, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunks(pub Vec<Hunk>);

impl Hunks {
    /// The hunks of one file's `git diff -U0` output (its `@@` lines; the
    /// rest is skipped); `None` when a header does not parse or the hunks
    /// are not in order.
    pub fn parse(diff: &str) -> Option<Hunks> {
        let mut out: Vec<Hunk> = Vec::new();
        for line in diff.lines().filter(|l| l.starts_with("@@ ")) {
            let mut parts = line[3..].split(' ');
            let old = parts.next()?.strip_prefix('-')?;
            let new = parts.next()?.strip_prefix('+')?;
            let (old_start, old_lines) = range(old)?;
            let (new_start, new_lines) = range(new)?;
            let h = Hunk {
                old_start,
                old_lines,
                new_start,
                new_lines,
            };
            if out.last().is_some_and(|p| p.old_span().1 > h.old_span().0) {
                return None;
            }
            out.push(h);
        }
        Some(Hunks(out))
    }

    /// Whether the file is unchanged.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Line `line` (0-based) of the old side on the new side, `None` when
    /// it was changed.
    pub fn forward(&self, line: u32) -> Option<u32> {
        shift(self.0.iter().map(|h| (h.old_span(), h.new_span())), line)
    }

    /// Line `line` (0-based) of the old side, changed, paired with its new
    /// line: only inside a hunk that replaced as many lines as it removed
    /// (line by line, the n-th with the n-th); `None` otherwise. What was
    /// on it may still be there, edited around (re-found by name).
    pub fn paired(&self, line: u32) -> Option<u32> {
        let l = line + 1;
        let h = self.0.iter().find(|h| {
            let (b, e) = h.old_span();
            (b..e).contains(&l)
        })?;
        if h.old_lines != h.new_lines {
            return None;
        }
        Some(h.new_span().0 + (l - h.old_span().0) - 1)
    }

    /// Line `line` (0-based) of the new side on the old side, `None` when
    /// it is a changed one.
    pub fn backward(&self, line: u32) -> Option<u32> {
        shift(self.0.iter().map(|h| (h.new_span(), h.old_span())), line)
    }
}

/// `line` (0-based) moved from the `from` spans to the `to` spans.
fn shift(spans: impl Iterator<Item = ((u32, u32), (u32, u32))>, line: u32) -> Option<u32> {
    let l = line as i64 + 1;
    let mut delta: i64 = 0;
    for ((fb, fe), (_, te)) in spans {
        if l < fb as i64 {
            break;
        }
        if l < fe as i64 {
            return None;
        }
        delta = te as i64 - fe as i64;
    }
    u32::try_from(l + delta - 1).ok()
}

/// `a,b` or `a` (a count of 1).
fn range(s: &str) -> Option<(u32, u32)> {
    match s.split_once(',') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
        None => Some((s.parse().ok()?, 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunks(diff: &str) -> Hunks {
        Hunks::parse(diff).expect("parses")
    }

    #[test]
    fn lines_before_a_hunk_stay_after_it_move_inside_it_do_not_translate() {
        // Two lines inserted after line 3, line 10 replaced by three,
        // lines 20-21 deleted.
        let h = hunks(
            "diff --git a/x b/x\n@@ -3,0 +4,2 @@ fn a\n+x\n+y\n@@ -10 +12,3 @@\n-o\n+n\n+n\n+n\n@@ -20,2 +23,0 @@\n-d\n-d\n",
        );
        // 0-based lines.
        assert_eq!(h.forward(0), Some(0));
        assert_eq!(h.forward(2), Some(2)); // line 3: before the insertion
        assert_eq!(h.forward(3), Some(5)); // line 4 → 6
        assert_eq!(h.forward(8), Some(10)); // line 9 → 11
        assert_eq!(h.forward(9), None); // line 10 replaced
        assert_eq!(h.forward(10), Some(14)); // line 11 → 15
        assert_eq!(h.forward(19), None); // line 20 deleted
        assert_eq!(h.forward(20), None);
        assert_eq!(h.forward(21), Some(23)); // line 22 → 24 (+4 −2)
        // Backward: the inserted lines have no old line.
        assert_eq!(h.backward(3), None);
        assert_eq!(h.backward(4), None);
        assert_eq!(h.backward(5), Some(3));
        assert_eq!(h.backward(14), Some(10));
        assert_eq!(h.backward(23), Some(21));
        for old in [0, 2, 3, 8, 10, 21, 40] {
            assert_eq!(h.forward(old).and_then(|n| h.backward(n)), Some(old));
        }
        // Changed lines pair only where as many replaced as removed.
        assert_eq!(h.paired(9), None); // 1 line became 3
        assert_eq!(h.paired(19), None); // deleted
        assert_eq!(h.paired(4), None); // not changed
        let one = hunks("@@ -5,2 +7,2 @@\n");
        assert_eq!(
            (one.paired(4), one.paired(5), one.paired(6)),
            (Some(6), Some(7), None)
        );
    }

    #[test]
    fn no_hunks_is_the_identity_and_bad_headers_are_refused() {
        let h = hunks("");
        assert!(h.is_empty());
        assert_eq!(h.forward(7), Some(7));
        assert!(Hunks::parse("@@ -x +1 @@\n").is_none());
        assert!(Hunks::parse("@@ -1,2\n").is_none());
        // Out of order.
        assert!(Hunks::parse("@@ -10 +10 @@\n@@ -3 +3 @@\n").is_none());
    }
}

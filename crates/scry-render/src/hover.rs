//! Hover normalisation: HTML to readable markdown-ish text.

/// Whether `line` opens or closes a fenced code block (```` ``` ```` or `~~~`,
/// indented at most three spaces).
fn is_fence(line: &str) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let t = &line[indent..];
    t.starts_with("```") || t.starts_with("~~~")
}

/// A thematic break: three or more of the same `-`, `*` or `_`, optionally
/// separated by spaces, indented at most three spaces.
fn is_rule(line: &str) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let mut marker = None;
    let mut count = 0;
    for c in line.trim().chars() {
        match c {
            ' ' | '\t' => {}
            '-' | '*' | '_' => {
                if marker.is_some_and(|m| m != c) {
                    return false;
                }
                marker = Some(c);
                count += 1;
            }
            _ => return false,
        }
    }
    count >= 3
}

const STRIPPED_TAGS: &[&str] = &[
    "a",
    "abbr",
    "b",
    "big",
    "blockquote",
    "body",
    "center",
    "cite",
    "del",
    "details",
    "dfn",
    "em",
    "font",
    "html",
    "i",
    "img",
    "ins",
    "kbd",
    "mark",
    "s",
    "samp",
    "section",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "tfoot",
    "thead",
    "tt",
    "u",
    "var",
];

/// What an HTML tag becomes, or `None` when `name` is not treated as HTML.
fn tag_replacement(name: &str, closing: bool, in_pre: &mut bool) -> Option<String> {
    let r = match name {
        "br" => "\n".to_string(),
        "p" | "div" => "\n\n".to_string(),
        "hr" => "\n\n---\n\n".to_string(),
        "ul" | "ol" | "dl" | "tr" | "dt" => "\n".to_string(),
        "li" if closing => String::new(),
        "li" => "\n- ".to_string(),
        "dd" if closing => String::new(),
        "dd" => "\n  ".to_string(),
        "td" | "th" if closing => String::new(),
        "td" | "th" => " ".to_string(),
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
            if closing {
                "\n\n".to_string()
            } else {
                let n = usize::from(name.as_bytes()[1] - b'0');
                format!("\n\n{} ", "#".repeat(n))
            }
        }
        "pre" => {
            *in_pre = !closing;
            "\n```\n".to_string()
        }
        "code" if *in_pre => String::new(),
        "code" => "`".to_string(),
        _ if STRIPPED_TAGS.contains(&name) => String::new(),
        _ => return None,
    };
    Some(r)
}

/// Try to read an HTML tag or comment at the start of `s` (which starts with
/// `<`). Returns the number of bytes it spans and its replacement.
fn parse_tag(s: &str, in_pre: &mut bool) -> Option<(usize, String)> {
    if let Some(rest) = s.strip_prefix("<!--") {
        let end = rest.find("-->")?;
        return Some((4 + end + 3, String::new()));
    }
    let bytes = s.as_bytes();
    let mut i = 1;
    let closing = bytes.get(i) == Some(&b'/');
    if closing {
        i += 1;
    }
    let name_start = i;
    while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
        i += 1;
    }
    let name = &s[name_start..i];
    if name.is_empty() || !name.as_bytes()[0].is_ascii_alphabetic() {
        return None;
    }
    // Lower-case names are HTML; all-upper-case names only when longer than
    // one letter (`<BR>`), so generics like `Foo<B>` or `Option<Code>` stay.
    let lower = name.to_ascii_lowercase();
    let upper_ok = name.len() > 1 && name == name.to_ascii_uppercase();
    if name != lower && !upper_ok {
        return None;
    }
    // Then attributes up to '>' with no '<' on the way.
    let rest = &s[i..];
    let first = rest.chars().next()?;
    if !matches!(first, '>' | '/' | ' ' | '\t' | '\n') {
        return None;
    }
    let close = rest.find('>')?;
    if rest[..close].contains('<') || close > 1000 {
        return None;
    }
    let replacement = tag_replacement(&lower, closing, in_pre)?;
    Some((i + close + 1, replacement))
}

/// Strip/convert HTML tags outside inline code spans.
fn convert_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_pre = false;
    let mut code_run: Option<usize> = None; // backtick run length of an open code span
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let c = rest.chars().next().unwrap_or('\0');
        if c == '`' {
            let run = rest.len() - rest.trim_start_matches('`').len();
            match code_run {
                None => code_run = Some(run),
                Some(n) if n == run => code_run = None,
                Some(_) => {}
            }
            out.push_str(&rest[..run]);
            i += run;
            continue;
        }
        if c == '<'
            && code_run.is_none()
            && let Some((len, rep)) = parse_tag(rest, &mut in_pre)
        {
            out.push_str(&rep);
            i += len;
            continue;
        }
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Decode the common HTML entities and numeric character references.
fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find('&') {
        out.push_str(&rest[..pos]);
        rest = &rest[pos..];
        let decoded = rest.get(1..rest.len().min(12)).and_then(|window| {
            let semi = window.find(';')?;
            let name = &window[..semi];
            let ch = match name {
                "lt" => '<',
                "gt" => '>',
                "amp" => '&',
                "quot" => '"',
                "apos" => '\'',
                "nbsp" => ' ',
                _ => {
                    let code = if let Some(hex) =
                        name.strip_prefix("#x").or_else(|| name.strip_prefix("#X"))
                    {
                        u32::from_str_radix(hex, 16).ok()?
                    } else {
                        name.strip_prefix('#')?.parse::<u32>().ok()?
                    };
                    match char::from_u32(code)? {
                        '\u{a0}' => ' ',
                        c => c,
                    }
                }
            };
            Some((ch, semi + 2))
        });
        match decoded {
            Some((ch, len)) => {
                out.push(ch);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// See [`crate::normalize_hover`].
pub fn normalize_hover(raw: &str) -> String {
    let raw = raw.replace("\r\n", "\n").replace('\r', "\n");

    // 1. Split into fenced code blocks (kept verbatim) and text (HTML
    //    converted); decode entities in both.
    let mut lines: Vec<(String, bool)> = Vec::new(); // (line, inside a fence)
    let mut text_block = String::new();
    let mut in_fence = false;
    let flush = |block: &mut String, lines: &mut Vec<(String, bool)>| {
        if !block.is_empty() {
            let converted = decode_entities(&convert_tags(block));
            lines.extend(converted.split('\n').map(|l| (l.to_string(), false)));
            block.clear();
        }
    };
    for line in raw.split('\n') {
        if in_fence {
            lines.push((decode_entities(line), true));
            if is_fence(line) {
                in_fence = false;
            }
        } else if is_fence(line) {
            flush(&mut text_block, &mut lines);
            lines.push((line.to_string(), true));
            in_fence = true;
        } else {
            if !text_block.is_empty() {
                text_block.push('\n');
            }
            text_block.push_str(line);
        }
    }
    flush(&mut text_block, &mut lines);

    // 2. Whitespace: trailing spaces off, rules as one `---` line with no
    //    blank lines around, blank-line runs to one, no blank/rule at the ends.
    let mut out: Vec<String> = Vec::new();
    for (line, fenced) in lines {
        let line = line.trim_end().replace('\u{a0}', " ");
        let line = line.trim_end();
        if !fenced && is_rule(line) {
            while out.last().is_some_and(|l| l.is_empty()) {
                out.pop();
            }
            if out.last().is_some_and(|l| l != "---") && !out.is_empty() {
                out.push("---".to_string());
            }
            continue;
        }
        if line.is_empty() && out.last().is_none_or(|l| l.is_empty() || l == "---") {
            continue;
        }
        out.push(line.to_string());
    }
    while out.last().is_some_and(|l| l.is_empty() || l == "---") {
        out.pop();
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::normalize_hover;

    #[test]
    fn html_is_stripped_and_entities_decoded() {
        let raw = "<b>Vec</b>&lt;T&gt;<br>a &amp; b<br/>&quot;q&quot; &#39;s&#39;&nbsp;x";
        assert_eq!(normalize_hover(raw), "Vec<T>\na & b\n\"q\" 's' x");
    }

    #[test]
    fn generics_and_code_are_kept() {
        let raw = "`Vec<b>` and Foo<B> and Option<Code>\n```rust\nfn f<a>() {}\n```";
        assert_eq!(normalize_hover(raw), raw);
    }

    #[test]
    fn blank_lines_and_rules_are_compacted() {
        let raw = "\n\n```rust\nfn f()   \n```\n\n\n---\n\n\n***\n\nDocs  \n\n\n\nMore\n\n---\n\n";
        assert_eq!(
            normalize_hover(raw),
            "```rust\nfn f()\n```\n---\nDocs\n\nMore"
        );
    }

    #[test]
    fn lists_and_paragraphs() {
        let raw = "<p>Intro</p><ul><li>one</li><li>two</li></ul><pre>x &lt; y</pre>";
        assert_eq!(
            normalize_hover(raw),
            "Intro\n\n- one\n- two\n\n```\nx < y\n```"
        );
    }

    #[test]
    fn is_idempotent_on_plain_markdown() {
        let md = "```python\ndef f(x: int) -> str\n```\n---\nDoc line.\n\n- item";
        assert_eq!(normalize_hover(md), md);
        assert_eq!(normalize_hover(&normalize_hover(md)), md);
    }
}

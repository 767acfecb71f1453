//! The model-facing text form.

use std::path::Path;

use scry_model::{
    Alternative, Answer, Body, CallDirection, CallEdge, CallItem, Loc, SymbolItem, SymbolNode,
};
use serde_json::Value;

use crate::RenderOptions;
use crate::common::{
    Placed, Rendered, asked_file_first, asked_position, clip, clip_line, distinct_files,
    flatten_outline, found_total, location_noun, place, plural, sort_dedup, subject_name,
};
use crate::display_path;
use crate::words::{self, Dialect};

/// Characters `lines` take once joined, counting one newline per line.
fn lines_chars(lines: &[String]) -> usize {
    lines.iter().map(|l| l.chars().count() + 1).sum()
}

/// Collects the items of a list body while they fit both caps.
struct Fit {
    max_items: usize,
    budget: usize,
    used: usize,
    shown: usize,
    lines: Vec<String>,
    full: bool,
}

impl Fit {
    /// Adds one item (its lines); false once an item did not fit, after which
    /// nothing more is taken.
    fn push(&mut self, item: Vec<String>) -> bool {
        if self.full || self.shown >= self.max_items {
            self.full = true;
            return false;
        }
        let cost = lines_chars(&item);
        if self.used + cost > self.budget {
            self.full = true;
            return false;
        }
        self.used += cost;
        self.shown += 1;
        self.lines.extend(item);
        true
    }
}

struct Ctx<'a> {
    answer: &'a Answer,
    root: &'a Path,
    opts: &'a RenderOptions,
    /// Characters of the lines around the body other than the header.
    fixed: usize,
}

impl Ctx<'_> {
    /// A collector for a body under `header`, keeping room for a marker line
    /// of at most `reserve` characters.
    fn fit(&self, header: &str, reserve: usize) -> Fit {
        let taken = self.fixed + header.chars().count() + 1 + reserve + 1;
        Fit {
            max_items: self.opts.max_locations,
            budget: self.opts.max_chars.saturating_sub(taken),
            used: 0,
            shown: 0,
            lines: Vec::new(),
            full: false,
        }
    }

    fn name(&self) -> Option<String> {
        subject_name(self.answer)
    }

    /// ` to `X`` / ` of `X``, empty when the name is unknown.
    fn about(&self, prep: &str) -> String {
        self.name()
            .map(|n| format!(" {prep} `{n}`"))
            .unwrap_or_default()
    }

    /// ` (at src/a.rs:3:5, declaration of ...)`, empty when unknown.
    fn at_paren(&self) -> String {
        let Some(pos) = asked_position(self.answer, self.root) else {
            return String::new();
        };
        match self
            .answer
            .asked_at
            .as_ref()
            .and_then(|a| words::via(&a.via))
        {
            Some(via) => format!(" (at {pos}, {via})"),
            None => format!(" (at {pos})"),
        }
    }

    /// ` — rust-analyzer`, empty when unknown.
    fn server(&self) -> String {
        crate::reports::server(self.answer, self.root)
            .map(|s| format!(" — {s}"))
            .unwrap_or_default()
    }
}

const NARROWER: &str = "(narrow the question to see the rest)";

pub(crate) fn render(answer: &Answer, root: &Path, opts: &RenderOptions) -> String {
    let partial = answer
        .partial
        .as_ref()
        .map(|p| words::partial(p, answer.precision, root, opts.dialect));
    let mut extras = Vec::new();
    if let Some(line) = others_line(answer, opts.dialect) {
        extras.push(line);
    }
    extras.extend(same_name_lines(answer, root, opts.dialect));
    extras.extend(
        answer
            .notes
            .iter()
            .map(|n| format!("Note: {}", words::reason_in(n, root, opts.dialect))),
    );

    let fixed = lines_chars(&extras) + partial.as_ref().map_or(0, |p| p.chars().count() + 1);
    let ctx = Ctx {
        answer,
        root,
        opts,
        fixed,
    };

    let r = if answer.body.is_empty() {
        Rendered {
            header: empty_line(&ctx),
            body: Vec::new(),
            marker: None,
        }
    } else {
        render_body(&ctx)
    };

    let mut lines = Vec::with_capacity(r.body.len() + extras.len() + 3);
    lines.push(r.header);
    lines.extend(partial);
    lines.extend(r.body);
    lines.extend(r.marker);
    lines.extend(extras);
    cap_lines(lines, opts.max_chars)
}

/// Joins `lines`, cutting at a line boundary so that the text, final marker
/// line included, has at most `max_chars` characters.
pub(crate) fn cap_lines(lines: Vec<String>, max_chars: usize) -> String {
    let lens: Vec<usize> = lines.iter().map(|l| l.chars().count()).collect();
    let total = lens.iter().sum::<usize>() + lens.len().saturating_sub(1);
    if total <= max_chars {
        return lines.join("\n");
    }
    let marker =
        |more: usize| format!("… output truncated at {max_chars} characters ({more} more lines)");
    // prefix[k]: characters of the first k lines, each with its newline.
    let mut prefix = Vec::with_capacity(lens.len() + 1);
    prefix.push(0usize);
    for l in &lens {
        prefix.push(prefix.last().copied().unwrap_or(0) + l + 1);
    }
    let mut k = lens.len() - 1;
    loop {
        if prefix[k] + marker(lens.len() - k).chars().count() <= max_chars {
            let mut out = lines[..k].join("\n");
            if k > 0 {
                out.push('\n');
            }
            out.push_str(&marker(lens.len() - k));
            return out;
        }
        if k == 0 {
            // Not even the marker fits: say so as briefly as the cap allows.
            return clip(&marker(lens.len()), max_chars.max(1));
        }
        k -= 1;
    }
}

fn render_body(ctx: &Ctx) -> Rendered {
    match &ctx.answer.body {
        Body::Locations { locations } => render_locations(ctx, locations),
        Body::Hover { text } => Rendered {
            header: format!(
                "Hover{}{}{}",
                ctx.about("for"),
                ctx.at_paren(),
                ctx.server()
            ),
            body: tidy(&crate::normalize_hover(text)),
            marker: None,
        },
        Body::Outline { path, symbols } => render_outline(ctx, path, symbols),
        Body::WorkspaceSymbols { query, symbols } => render_workspace_symbols(ctx, query, symbols),
        Body::Calls {
            direction, calls, ..
        } => render_calls(ctx, *direction, calls),
        Body::Status(report) => crate::reports::status_text(report, ctx.root),
        Body::Capabilities {
            server,
            root,
            encoding,
            capabilities,
        } => Rendered {
            header: format!(
                "Capabilities of {server} (root {}, encoding {encoding}):",
                display_path(root, ctx.root)
            ),
            body: pretty(capabilities),
            marker: None,
        },
        Body::Raw { method, result } => Rendered {
            header: format!("Result of {method}{}:", ctx.server()),
            body: pretty(result),
            marker: None,
        },
        Body::Diagnostics(report) => {
            let (mut body, marker) = crate::diagnostics::text_body(report, ctx.root);
            body.extend(marker);
            body.extend(crate::diagnostics::text_tail(report, ctx.root));
            Rendered {
                header: crate::diagnostics::summary(report),
                body,
                marker: None,
            }
        }
        Body::Edit(r) => {
            let header = crate::edit::header(r, ctx.root, &ctx.server());
            let budget = ctx
                .opts
                .max_chars
                .saturating_sub(ctx.fixed + header.chars().count() + 1);
            let (body, marker) =
                crate::edit::text_body(r, ctx.root, ctx.opts.max_locations, budget);
            Rendered {
                header,
                body,
                marker,
            }
        }
        Body::CodeActions(list) => {
            let (header, body) =
                crate::edit::actions_text(list, ctx.root, &ctx.server(), ctx.opts.dialect);
            Rendered {
                header,
                body,
                marker: None,
            }
        }
        Body::Map(m) => crate::map::render_map(m, ctx.root),
        Body::Reloaded { stopped } => Rendered {
            header: format!(
                "Reloaded configuration; stopped {}.",
                plural(*stopped, "server", "servers")
            ),
            body: Vec::new(),
            marker: None,
        },
    }
}

/// Hover text as lines: trailing whitespace off, blank-line runs collapsed.
/// (Applied after `normalize_hover`.)
fn tidy(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.trim_matches('\n').lines() {
        let line = line.trim_end();
        if line.is_empty() && out.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        out.push(line.to_string());
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

fn pretty(v: &Value) -> Vec<String> {
    serde_json::to_string_pretty(v)
        .unwrap_or_else(|_| v.to_string())
        .lines()
        .map(str::to_string)
        .collect()
}

fn loc_line(loc: &Loc, indent: &str) -> String {
    match loc.text.as_deref().map(clip_line) {
        Some(t) if !t.is_empty() => format!("{indent}{}:{}  {t}", loc.line, loc.col),
        _ => format!("{indent}{}:{}", loc.line, loc.col),
    }
}

fn render_locations(ctx: &Ctx, locations: &[Loc]) -> Rendered {
    let mut placed = sort_dedup(
        locations
            .iter()
            .enumerate()
            .map(|(i, l)| place(l, ctx.root, i)),
    );
    let listed = placed.len();
    let total = found_total(ctx.answer, listed);
    let capped = listed > ctx.opts.max_locations || total > listed;
    asked_file_first(&mut placed, ctx.answer, ctx.root, capped);
    let (one, many) = location_noun(ctx.answer.action);
    let prep = if ctx.answer.action == scry_model::Action::References {
        "to"
    } else {
        "of"
    };
    let base = format!(
        "{}{}{}{}",
        // The server listed more than were kept: a lower bound.
        if crate::common::server_capped(ctx.answer) {
            "at least "
        } else {
            ""
        },
        plural(total, one, many),
        ctx.about(prep),
        ctx.at_paren()
    );
    let server = ctx.server();
    // The longest the header can be once the list is cut.
    let widest = format!("{base}, {listed} shown{server}");
    let reserve = more_marker(&placed, total, one, many).chars().count();
    let mut fit = ctx.fit(&widest, reserve);
    grouped(&mut fit, &placed, |p| loc_line(p.loc, "  "));
    let cut = fit.shown < total;
    Rendered {
        header: if cut {
            format!("{base}, {} shown{server}", fit.shown)
        } else {
            format!("{base}{server}")
        },
        marker: cut.then(|| more_marker(&placed[fit.shown..], total - fit.shown, one, many)),
        body: fit.lines,
    }
}

/// The marker after a cut list: "… N more callers in M files (narrow …)",
/// `one`/`many` naming an omitted item; `n` counts the omitted items,
/// `omitted` those of them the answer holds (fewer when the engine kept
/// only the first it found: the rest are said as not considered).
fn more_marker(omitted: &[Placed], n: usize, one: &str, many: &str) -> String {
    let noun = if n == 1 { one } else { many };
    let files = plural(distinct_files(omitted), "file", "files");
    match n - omitted.len().min(n) {
        0 => format!("… {n} more {noun} in {files} {NARROWER}"),
        _ if omitted.is_empty() => format!("… {n} more {noun}, past those considered {NARROWER}"),
        rest => format!(
            "… {n} more {noun}: {} in {files}, {rest} past those considered {NARROWER}",
            omitted.len()
        ),
    }
}

/// Pushes `placed` grouped under file header lines until the caps bite.
fn grouped(fit: &mut Fit, placed: &[Placed], line: impl Fn(&Placed) -> String) {
    let mut last: Option<&str> = None;
    for p in placed {
        let mut item = Vec::with_capacity(2);
        if last != Some(p.path.as_str()) {
            item.push(p.path.clone());
        }
        item.push(line(p));
        if !fit.push(item) {
            break;
        }
        last = Some(p.path.as_str());
    }
}

fn detail_suffix(detail: Option<&str>) -> String {
    let Some(d) = detail else {
        return String::new();
    };
    let d = d.split_whitespace().collect::<Vec<_>>().join(" ");
    if d.is_empty() || d.chars().count() >= 60 {
        String::new()
    } else {
        format!(" — {d}")
    }
}

fn render_outline(ctx: &Ctx, path: &Path, symbols: &[SymbolNode]) -> Rendered {
    let flat = flatten_outline(symbols);
    let total = flat.len();
    let header = format!(
        "Symbols in {} ({total}){}",
        display_path(path, ctx.root),
        ctx.server()
    );
    let marker = |n: usize| {
        format!(
            "… {n} more {} not shown",
            if n == 1 { "symbol" } else { "symbols" }
        )
    };
    let mut fit = ctx.fit(&header, marker(total).chars().count());
    let width = flat
        .iter()
        .map(|(_, n)| n.line.to_string().len())
        .max()
        .unwrap_or(1);
    for (depth, n) in &flat {
        let line = format!(
            "{:>width$}  {}{} {}{}",
            n.line,
            "  ".repeat(*depth),
            n.kind,
            n.name,
            detail_suffix(n.detail.as_deref())
        );
        if !fit.push(vec![line]) {
            break;
        }
    }
    let omitted = total - fit.shown;
    Rendered {
        header,
        marker: (omitted > 0).then(|| marker(omitted)),
        body: fit.lines,
    }
}

fn render_workspace_symbols(ctx: &Ctx, query: &str, symbols: &[SymbolItem]) -> Rendered {
    let placed = sort_dedup(
        symbols
            .iter()
            .enumerate()
            .map(|(i, s)| place(&s.loc, ctx.root, i)),
    );
    let total = placed.len();
    let header = format!(
        "{} matching `{query}`{}",
        plural(total, "workspace symbol", "workspace symbols"),
        ctx.server()
    );
    let marker = |n: usize, files: usize| {
        format!(
            "… {} more in {} {NARROWER}",
            plural(n, "symbol", "symbols"),
            plural(files, "file", "files")
        )
    };
    let reserve = marker(total, distinct_files(&placed)).chars().count();
    let mut fit = ctx.fit(&header, reserve);
    grouped(&mut fit, &placed, |p| {
        let s = &symbols[p.idx];
        let container = s
            .container
            .as_ref()
            .filter(|c| !c.is_empty())
            .map(|c| format!(" (in {c})"))
            .unwrap_or_default();
        format!(
            "  {}:{}  {} {}{container}",
            p.loc.line, p.loc.col, s.kind, s.name
        )
    });
    let omitted = &placed[fit.shown..];
    Rendered {
        header,
        marker: (!omitted.is_empty()).then(|| marker(omitted.len(), distinct_files(omitted))),
        body: fit.lines,
    }
}

fn call_item_line(item: &CallItem, root: &Path) -> String {
    format!(
        "{} {}  {}:{}:{}",
        item.kind,
        item.name,
        display_path(&item.loc.path, root),
        item.loc.line,
        item.loc.col
    )
}

fn render_calls(ctx: &Ctx, direction: CallDirection, calls: &[CallEdge]) -> Rendered {
    let placed = sort_dedup(
        calls
            .iter()
            .enumerate()
            .map(|(i, c)| place(&c.item.loc, ctx.root, i)),
    );
    let total = placed.len();
    let sites: usize = placed.iter().map(|p| calls[p.idx].sites.len()).sum();
    let (title, prep, one, many) = match direction {
        CallDirection::Incoming => ("Incoming calls", "to", "caller", "callers"),
        CallDirection::Outgoing => ("Outgoing calls", "from", "callee", "callees"),
    };
    let header = format!(
        "{title}{}{}: {}, {}{}",
        ctx.about(prep),
        ctx.at_paren(),
        plural(total, one, many),
        plural(sites, "call site", "call sites"),
        ctx.server()
    );
    let reserve = more_marker(&placed, placed.len(), one, many)
        .chars()
        .count();
    let mut fit = ctx.fit(&header, reserve);
    for p in &placed {
        let call = &calls[p.idx];
        let mut item = vec![call_item_line(&call.item, ctx.root)];
        let site_places = sort_dedup(
            call.sites
                .iter()
                .enumerate()
                .map(|(i, l)| place(l, ctx.root, i)),
        );
        for s in &site_places {
            if s.loc.path == call.item.loc.path {
                item.push(loc_line(s.loc, "    "));
            } else {
                item.push(loc_line(s.loc, &format!("    {}:", s.path)));
            }
        }
        if !fit.push(item) {
            break;
        }
    }
    let omitted = &placed[fit.shown..];
    Rendered {
        header,
        marker: (!omitted.is_empty()).then(|| more_marker(omitted, omitted.len(), one, many)),
        body: fit.lines,
    }
}

/// The one line said when nothing came back.
fn empty_line(ctx: &Ctx) -> String {
    let a = ctx.answer;
    let at = asked_position(a, ctx.root)
        .map(|p| format!(" at {p}"))
        .unwrap_or_default();
    let mut s = match &a.body {
        Body::Hover { .. } => format!("No hover information{}{at}", ctx.about("for")),
        Body::Outline { path, .. } => format!("No symbols in {}", display_path(path, ctx.root)),
        Body::Map(_) => "No repository map".to_string(),
        Body::WorkspaceSymbols { query, .. } => format!("No workspace symbols match `{query}`"),
        Body::Calls { direction, .. } => {
            let dir = match direction {
                CallDirection::Incoming => "incoming",
                CallDirection::Outgoing => "outgoing",
            };
            format!("No {dir} calls found{}{at}", ctx.about("for"))
        }
        _ => format!("No {} found{}{at}", a.action.noun(), ctx.about("for")),
    };
    let mut paren = Vec::new();
    if let Some(via) = a.asked_at.as_ref().and_then(|asked| words::via(&asked.via)) {
        paren.push(via);
    }
    if let Some(server) = crate::reports::server(a, ctx.root) {
        paren.push(format!("asked {server}"));
    }
    if !paren.is_empty() {
        s.push_str(&format!(" ({})", paren.join("; ")));
    }
    s.push('.');
    if let Some(reason) = &a.empty_reason {
        s.push_str(&format!(
            " Reason: {}",
            words::empty_reason(reason, ctx.root, ctx.opts.dialect)
        ));
    }
    s
}

/// The last identifier segment of a possibly qualified name.
fn base_name(name: &str) -> &str {
    name.rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .find(|s| !s.is_empty())
        .unwrap_or(name)
}

fn others_line(answer: &Answer, dialect: Dialect) -> Option<String> {
    if answer.others.is_empty() {
        return None;
    }
    let name = subject_name(answer).unwrap_or_else(|| answer.others[0].name.clone());
    let base = base_name(&name).to_string();
    let mut others: Vec<&Alternative> = answer.others.iter().collect();
    others.sort_by_key(|o| (o.line, o.col));
    let items: Vec<String> = others
        .iter()
        .map(|o| {
            let mut s = format!("{}:{} {}", o.line, o.col, o.kind);
            if o.name != name && o.name != base {
                s.push_str(&format!(" `{}`", o.name));
            }
            if let Some(c) = o.container.as_ref().filter(|c| !c.is_empty()) {
                s.push_str(&format!(" in `{c}`"));
            }
            s
        })
        .collect();
    Some(format!(
        "Other declarations of `{name}` in this file (pick one with {}): {}",
        dialect.flag(scry_model::action::Arg::Line),
        items.join(", ")
    ))
}

/// The lines naming the other targets of the asked name (see
/// [`scry_model::SameName`]): with their own answer for the actions that
/// show a target, else only with the argument that selects each.
fn same_name_lines(answer: &Answer, root: &Path, dialect: Dialect) -> Vec<String> {
    let Some(same) = &answer.same_name else {
        return Vec::new();
    };
    let name = scry_model::name::SymbolName::parse(&same.answered_form).name;
    let scope = words::same_name_scope(same);
    let label = |o: &scry_model::SameNameOccurrence| {
        let at = if same.line.is_some() {
            format!("col {}", o.col)
        } else {
            format!("{}:{}", o.line, o.col)
        };
        let select = words::selectors(&o.select, dialect).join(" or ");
        format!("{at} `{}` ({select})", o.form)
    };
    let shown = answer
        .same_name
        .as_ref()
        .is_some_and(|s| s.others.iter().any(|o| o.body.is_some()));
    let mut lines = Vec::new();
    if shown {
        lines.push(format!("Other targets of `{name}` {scope}:"));
        for o in &same.others {
            let what = match &o.body {
                Some(Body::Locations { locations }) if !locations.is_empty() => locations
                    .iter()
                    .take(3)
                    .map(|l| {
                        let text = l.text.as_deref().map(clip_line).unwrap_or_default();
                        format!(
                            "{}:{}:{}  {}",
                            display_path(&l.path, root),
                            l.line,
                            l.col,
                            text.trim()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
                Some(Body::Hover { text }) => crate::normalize_hover(text)
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty() && !l.starts_with("```"))
                    .map(clip_line)
                    .unwrap_or_default(),
                _ => "nothing found".to_string(),
            };
            lines.push(format!("  {} → {what}", label(o)));
        }
    } else {
        let items: Vec<String> = same.others.iter().map(label).collect();
        lines.push(format!(
            "Other targets of `{name}` {scope} (this answer is for `{}`): {}",
            same.answered_form,
            items.join(", ")
        ));
    }
    lines
}

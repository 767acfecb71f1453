//! A server's `WorkspaceEdit` → a validated [`EditPlan`]: the final state of
//! every path it touches. Reads the disk, writes nothing.
//!
//! The edit's operations are simulated in order over a virtual view of the
//! workspace (what each path holds after the operations so far), so that a
//! `TextDocumentEdit` after a `RenameFile` edits the moved content, a
//! `CreateFile` then an edit fills the new file, and so on. The result is
//! the set of paths whose content changes, with their before- and
//! after-images: the writer ([`crate::apply`]) needs nothing else.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use scry_text::{Encoding, LineIndex, LspPos};
use serde_json::Value;

use scry_base::paths::{self, Unconfined};
use scry_base::uri::uri_to_path;
use scry_model::EditFact;
use scry_model::edit_fact::{MoveProblem, Protection};
use scry_model::error::OpError;

/// Most files one edit may touch (a directory rename counts every file).
pub const MAX_FILES: usize = 5000;
/// Most bytes of before- plus after-images one edit may hold.
pub const MAX_BYTES: usize = 256 * 1024 * 1024;

/// The configuration files no edit may write (besides `.git` and the user
/// configuration file, which this crate knows): their names are facts of
/// the configuration (scry-workspace), so the engine passes them in.
#[derive(Debug, Clone, Copy)]
pub struct Protected<'a> {
    /// scry's project configuration files (relative paths), refused at any
    /// depth, since a subdirectory may be opened as a workspace later.
    pub anywhere: &'a [&'a str],
    /// Other agents' configuration files that scry reads as project layers
    /// (relative paths), refused at the workspace root, where scry reads
    /// them.
    pub at_root: &'a [&'a str],
}

/// What the server that produced the edit has for an open document.
#[derive(Debug, Clone)]
pub struct ServerView {
    pub text: Arc<LineIndex>,
    pub version: i32,
}

/// The content and permissions of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileImage {
    pub bytes: Vec<u8>,
    /// The permission word kept ([`crate::platform::attrs`]: the Unix mode
    /// bits, the Windows read-only and hidden attributes); `None` for a new
    /// file (created with the process's defaults).
    pub mode: Option<u32>,
}

/// One path whose state changes: `None` means absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    pub before: Option<FileImage>,
    pub after: Option<FileImage>,
}

/// Where an edit landed, for the answer: 1-based line and column (in
/// characters) in the new text, and that line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditedAt {
    pub path: PathBuf,
    pub line: u32,
    pub col: u32,
    pub text: String,
}

/// A validated edit, ready to preview or commit.
#[derive(Debug, Clone, Default)]
pub struct EditPlan {
    /// Paths whose state changes, sorted.
    pub changes: Vec<FileChange>,
    /// Directories to create, parents first.
    pub dirs_created: Vec<PathBuf>,
    /// Directories to remove, deepest first.
    pub dirs_removed: Vec<PathBuf>,
    /// One entry per text edit.
    pub edits: Vec<EditedAt>,
    /// Resource operations, in order, as the answer reports them.
    pub created: Vec<PathBuf>,
    pub renamed: Vec<(PathBuf, PathBuf)>,
    pub deleted: Vec<PathBuf>,
    /// Existing files replaced whole: `CreateFile` with `overwrite` (the
    /// file is emptied), `RenameFile` with `overwrite` onto a file.
    pub overwritten: Vec<PathBuf>,
}

impl EditPlan {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.dirs_created.is_empty() && self.dirs_removed.is_empty()
    }

    /// Files whose content changes (not created, not deleted).
    pub fn modified_files(&self) -> usize {
        self.changes
            .iter()
            .filter(|c| c.before.is_some() && c.after.is_some())
            .count()
    }
}

fn rejected(fact: EditFact) -> OpError {
    OpError::EditRejected(fact.message())
}

fn cannot_read(p: &Path, e: impl std::fmt::Display) -> OpError {
    rejected(EditFact::CannotRead {
        path: p.to_path_buf(),
        why: e.to_string(),
    })
}

/// The path an edit may touch: absolute, `..` and symlinks resolved (for a
/// path that does not exist yet, through its nearest existing ancestor),
/// inside `root` (canonical) and not `root` itself, not inside `.git`, not
/// one of the `protected` configuration files.
pub fn confine(root: &Path, path: &Path, protected: &Protected) -> Result<PathBuf, OpError> {
    let outside = || OpError::OutsideWorkspace {
        path: path.to_path_buf(),
        root: root.to_path_buf(),
    };
    if !path.is_absolute() {
        return Err(outside());
    }
    let full = match paths::confine(root, path) {
        Ok(full) => full,
        Err(Unconfined::Outside) => return Err(outside()),
        Err(Unconfined::DanglingLink) => {
            return Err(rejected(EditFact::DanglingLink {
                path: path.to_path_buf(),
            }));
        }
    };
    if full == root {
        return Err(rejected(EditFact::WorkspaceRoot {
            root: root.to_path_buf(),
        }));
    }
    if let Some(why) = refused(root, &full, protected) {
        return Err(rejected(EditFact::Protected { path: full, why }));
    }
    Ok(full)
}

/// Why no edit may write `path` (canonical, inside `root`), if so: it is
/// inside a `.git` directory (at any depth), or one of scry's own
/// configuration files (`protected`: the project files at any depth, the
/// other agents' files scry reads at the root; and the user configuration
/// file when it lies in the workspace). A server must not change what scry
/// runs or trusts.
pub fn refused(root: &Path, path: &Path, protected: &Protected) -> Option<Protection> {
    let rel = path.strip_prefix(root).ok()?;
    if rel.components().any(|c| c.as_os_str() == ".git") {
        return Some(Protection::InsideGit);
    }
    if protected.anywhere.iter().any(|f| rel.ends_with(f)) {
        return Some(Protection::ScryConfig);
    }
    if protected.at_root.iter().any(|f| rel == Path::new(f)) {
        return Some(Protection::ReadConfig);
    }
    if scry_base::dirs::user_config().is_some_and(|u| u == path) {
        return Some(Protection::UserConfig);
    }
    None
}

fn uri_path(root: &Path, protected: &Protected, v: &Value, what: &str) -> Result<PathBuf, OpError> {
    let Some(uri) = v.as_str() else {
        return Err(rejected(EditFact::NotAUri { field: what.into() }));
    };
    let Some(p) = uri_to_path(uri) else {
        return Err(rejected(EditFact::NotAFile { uri: uri.into() }));
    };
    confine(root, &p, protected)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Absent,
    File(FileImage),
    Dir,
}

/// The simulated workspace.
struct Vfs<'a> {
    root: &'a Path,
    /// Current state of every path looked at.
    nodes: BTreeMap<PathBuf, Node>,
    /// State on disk before the edit, of every path looked at.
    initial: BTreeMap<PathBuf, Node>,
    /// Paths whose content the edit has set (created, moved or edited):
    /// the server's view no longer applies to them.
    touched: BTreeSet<PathBuf>,
    bytes: usize,
}

/// What is at `p` on disk (messages name it as a path).
fn disk_node(p: &Path) -> Result<Node, OpError> {
    let meta = match p.symlink_metadata() {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Node::Absent),
        Err(e) => return Err(cannot_read(p, e)),
    };
    if meta.file_type().is_symlink() {
        return Err(rejected(EditFact::Symlink {
            path: p.to_path_buf(),
        }));
    }
    if meta.is_dir() {
        return Ok(Node::Dir);
    }
    if !meta.is_file() {
        return Err(rejected(EditFact::NotRegular {
            path: p.to_path_buf(),
        }));
    }
    // The one safe reader: a file swapped for a FIFO since the stat is
    // refused, never blocked on (no size limit: a before-image is whole).
    let bytes = scry_base::disk::read(p, u64::MAX).map_err(|e| cannot_read(p, e))?;
    let mode = Some(crate::platform::attrs::of(&meta));
    Ok(Node::File(FileImage { bytes, mode }))
}

impl<'a> Vfs<'a> {
    fn new(root: &'a Path) -> Vfs<'a> {
        Vfs {
            root,
            nodes: BTreeMap::new(),
            initial: BTreeMap::new(),
            touched: BTreeSet::new(),
            bytes: 0,
        }
    }

    fn get(&mut self, p: &Path) -> Result<Node, OpError> {
        if let Some(n) = self.nodes.get(p) {
            return Ok(n.clone());
        }
        // Inside a directory removed (or moved away) by this edit?
        let mut anc = p.parent();
        while let Some(a) = anc {
            if !a.starts_with(self.root) || a == self.root {
                break;
            }
            if matches!(self.nodes.get(a), Some(Node::Absent)) {
                return Ok(Node::Absent);
            }
            anc = a.parent();
        }
        let n = disk_node(p)?;
        if let Node::File(f) = &n {
            self.bytes += f.bytes.len();
            if self.bytes > MAX_BYTES {
                return Err(rejected(EditFact::TooManyBytes {
                    mib: MAX_BYTES >> 20,
                }));
            }
        }
        self.initial.insert(p.to_path_buf(), n.clone());
        self.nodes.insert(p.to_path_buf(), n.clone());
        if self.nodes.len() > MAX_FILES {
            return Err(rejected(EditFact::TooManyPaths { max: MAX_FILES }));
        }
        Ok(n)
    }

    fn set(&mut self, p: &Path, n: Node) -> Result<(), OpError> {
        self.get(p)?; // records the initial state
        self.nodes.insert(p.to_path_buf(), n);
        Ok(())
    }

    /// Make sure every ancestor of `p` up to the root is a directory.
    fn ensure_parents(&mut self, p: &Path) -> Result<(), OpError> {
        let mut chain = Vec::new();
        let mut anc = p.parent();
        while let Some(a) = anc {
            if a == self.root || !a.starts_with(self.root) {
                break;
            }
            chain.push(a.to_path_buf());
            anc = a.parent();
        }
        for a in chain.into_iter().rev() {
            match self.get(&a)? {
                Node::Dir => {}
                Node::Absent => self.set(&a, Node::Dir)?,
                Node::File(_) => {
                    return Err(rejected(EditFact::InsideAFile {
                        file: a,
                        path: p.to_path_buf(),
                    }));
                }
            }
        }
        Ok(())
    }

    /// Every path under directory `dir` (files and directories, as they are
    /// now), deepest last.
    fn subtree(&mut self, dir: &Path) -> Result<Vec<(PathBuf, Node)>, OpError> {
        let mut names: BTreeSet<PathBuf> = BTreeSet::new();
        // From disk, unless the edit removed or replaced the directory.
        if matches!(self.initial.get(dir), Some(Node::Dir)) || !self.nodes.contains_key(dir) {
            let mut stack = vec![dir.to_path_buf()];
            while let Some(d) = stack.pop() {
                let Ok(rd) = std::fs::read_dir(&d) else {
                    continue;
                };
                for e in rd.flatten() {
                    let p = e.path();
                    if names.len() > MAX_FILES {
                        return Err(rejected(EditFact::DirTooLarge {
                            path: dir.to_path_buf(),
                            max: MAX_FILES,
                        }));
                    }
                    if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                        stack.push(p.clone());
                    }
                    names.insert(p);
                }
            }
        }
        // Paths the edit created or moved there.
        for p in self.nodes.keys() {
            if p.starts_with(dir) && p != dir {
                names.insert(p.clone());
            }
        }
        let mut out = Vec::new();
        for p in names {
            let n = self.get(&p)?;
            if n != Node::Absent {
                out.push((p, n));
            }
        }
        Ok(out)
    }
}

/// Options of CreateFile / RenameFile / DeleteFile.
fn opt(v: &Value, name: &str) -> bool {
    v["options"][name].as_bool().unwrap_or(false)
}

struct Builder<'a> {
    vfs: Vfs<'a>,
    encoding: Encoding,
    views: &'a HashMap<PathBuf, ServerView>,
    server: &'a str,
    protected: &'a Protected<'a>,
    plan: EditPlan,
    /// Text edits as (path at the time, offset in that text, the text), and
    /// the moves that came after, to report final paths.
    landed: Vec<(usize, PathBuf, usize, Arc<LineIndex>)>,
    moves: Vec<(usize, PathBuf, PathBuf)>,
    seq: usize,
}

/// The exact byte offset of an LSP position, or `None` when it is not a
/// position of the text (past the line end, past the last line, inside a
/// character). `(line_count, 0)` is accepted as the end of the text.
fn exact_offset(idx: &LineIndex, pos: LspPos, enc: Encoding) -> Option<usize> {
    let lc = idx.line_count();
    if pos.line == lc && pos.character == 0 {
        return Some(idx.text().len());
    }
    if pos.line >= lc || pos.character > idx.line_len(pos.line, enc)? {
        return None;
    }
    let o = idx.lsp_to_offset(pos, enc);
    (idx.offset_to_lsp(o, enc) == pos).then_some(o)
}

fn lsp_pos(v: &Value) -> Option<LspPos> {
    Some(LspPos {
        line: u32::try_from(v["line"].as_u64()?).ok()?,
        character: u32::try_from(v["character"].as_u64()?).ok()?,
    })
}

/// The file's line terminator when it uses CRLF throughout.
fn crlf_file(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    crlf > 0 && crlf == text.matches('\n').count()
}

fn ends_with_newline(s: &str) -> bool {
    s.ends_with('\n') || s.ends_with('\r')
}

const BOM: char = '\u{feff}';

impl<'a> Builder<'a> {
    /// Apply a list of `TextEdit`s to the file at `path`.
    fn text_edits(
        &mut self,
        path: &Path,
        version: Option<i64>,
        edits: &[Value],
    ) -> Result<(), OpError> {
        let image = match self.vfs.get(path)? {
            Node::File(f) => f,
            Node::Absent => {
                return Err(rejected(EditFact::ChangesMissing {
                    path: path.to_path_buf(),
                }));
            }
            Node::Dir => {
                return Err(rejected(EditFact::ChangesDirectory {
                    path: path.to_path_buf(),
                }));
            }
        };
        let Ok(text) = String::from_utf8(image.bytes.clone()) else {
            return Err(rejected(EditFact::NotUtf8 {
                path: path.to_path_buf(),
            }));
        };
        // The server computed the edit on what it had: that must be what the
        // disk holds, in the version scry sent.
        if !self.vfs.touched.contains(path)
            && let Some(view) = self.views.get(path)
        {
            if view.text.text() != text {
                return Err(OpError::FileChanged(
                    EditFact::ChangedSinceRead {
                        path: path.to_path_buf(),
                        server: self.server.into(),
                    }
                    .message(),
                ));
            }
            if let Some(v) = version
                && v != i64::from(view.version)
            {
                return Err(OpError::FileChanged(
                    EditFact::VersionMismatch {
                        server: self.server.into(),
                        path: path.to_path_buf(),
                        version: v,
                        synced: view.version,
                    }
                    .message(),
                ));
            }
        }
        let idx = LineIndex::new(text);
        let mut ranges = Vec::with_capacity(edits.len());
        for (i, e) in edits.iter().enumerate() {
            let (Some(s), Some(en)) = (lsp_pos(&e["range"]["start"]), lsp_pos(&e["range"]["end"]))
            else {
                return Err(rejected(EditFact::TextEditWithout {
                    path: path.to_path_buf(),
                    field: "range".into(),
                }));
            };
            let Some(new_text) = e["newText"].as_str() else {
                return Err(rejected(EditFact::TextEditWithout {
                    path: path.to_path_buf(),
                    field: "newText".into(),
                }));
            };
            let bad = |p: LspPos| {
                rejected(EditFact::NotAPosition {
                    server: self.server.into(),
                    path: path.to_path_buf(),
                    line: p.line + 1,
                    col: p.character + 1,
                    encoding: self.encoding.to_string(),
                })
            };
            let so = exact_offset(&idx, s, self.encoding).ok_or_else(|| bad(s))?;
            let eo = exact_offset(&idx, en, self.encoding).ok_or_else(|| bad(en))?;
            if eo < so {
                return Err(rejected(EditFact::RangeReversed {
                    server: self.server.into(),
                    path: path.to_path_buf(),
                }));
            }
            ranges.push((so, eo, i, new_text));
        }
        ranges.sort_by_key(|&(s, e, i, _)| (s, e, i));
        for w in ranges.windows(2) {
            if w[0].1 > w[1].0 {
                let p = idx.char_pos(w[1].0);
                return Err(rejected(EditFact::Overlapping {
                    server: self.server.into(),
                    path: path.to_path_buf(),
                    line: p.line + 1,
                    col: p.col + 1,
                }));
            }
        }
        let old = idx.text();
        let crlf = crlf_file(old);
        let mut out = String::with_capacity(old.len());
        let mut last = 0;
        let mut starts = Vec::with_capacity(ranges.len());
        let mut touches_end = false;
        for (s, e, _, t) in &ranges {
            out.push_str(&old[last..*s]);
            starts.push(out.len());
            if crlf {
                let mut prev = '\0';
                for c in t.chars() {
                    if c == '\n' && prev != '\r' {
                        out.push('\r');
                    }
                    out.push(c);
                    prev = c;
                }
            } else {
                out.push_str(t);
            }
            last = *e;
            touches_end |= *e == old.len();
        }
        out.push_str(&old[last..]);
        // Faithful: a BOM and the trailing-newline state survive edits that
        // rewrite the start or the end.
        if old.starts_with(BOM) && !out.starts_with(BOM) {
            out.insert(0, BOM);
            for s in &mut starts {
                *s += BOM.len_utf8();
            }
        }
        if touches_end && !out.is_empty() {
            let had = ends_with_newline(old);
            if had && !ends_with_newline(&out) {
                let term = if old.ends_with("\r\n") {
                    "\r\n"
                } else if old.ends_with('\r') {
                    "\r"
                } else {
                    "\n"
                };
                out.push_str(term);
            } else if !had && !old.is_empty() && ends_with_newline(&out) {
                while ends_with_newline(&out) {
                    out.pop();
                }
            }
        }
        let new_idx = Arc::new(LineIndex::new(out));
        for s in starts {
            self.seq += 1;
            self.landed
                .push((self.seq, path.to_path_buf(), s, new_idx.clone()));
        }
        let bytes = new_idx.text().as_bytes().to_vec();
        self.vfs.set(
            path,
            Node::File(FileImage {
                bytes,
                mode: image.mode,
            }),
        )?;
        Ok(())
    }

    fn create(&mut self, v: &Value) -> Result<(), OpError> {
        let root = self.vfs.root;
        let p = uri_path(root, self.protected, &v["uri"], "CreateFile.uri")?;
        match self.vfs.get(&p)? {
            Node::Dir => {
                return Err(rejected(EditFact::CreateOverDirectory { path: p }));
            }
            Node::File(f) => {
                if opt(v, "overwrite") {
                    self.vfs.set(
                        &p,
                        Node::File(FileImage {
                            bytes: Vec::new(),
                            mode: f.mode,
                        }),
                    )?;
                    self.vfs.touched.insert(p.clone());
                    self.plan.overwritten.push(p);
                } else if !opt(v, "ignoreIfExists") {
                    return Err(rejected(EditFact::CreateExists { path: p }));
                }
                return Ok(());
            }
            Node::Absent => {}
        }
        self.vfs.ensure_parents(&p)?;
        self.vfs.set(
            &p,
            Node::File(FileImage {
                bytes: Vec::new(),
                mode: None,
            }),
        )?;
        self.vfs.touched.insert(p.clone());
        self.plan.created.push(p);
        Ok(())
    }

    fn rename(&mut self, v: &Value) -> Result<(), OpError> {
        let root = self.vfs.root;
        let from = uri_path(root, self.protected, &v["oldUri"], "RenameFile.oldUri")?;
        let to = uri_path(root, self.protected, &v["newUri"], "RenameFile.newUri")?;
        if from == to {
            return Ok(());
        }
        // Every refusal names the operation first.
        let refused = |why: MoveProblem| {
            rejected(EditFact::MoveRefused {
                from: from.clone(),
                to: to.clone(),
                why,
            })
        };
        if to.starts_with(&from) {
            return Err(refused(MoveProblem::IntoItself));
        }
        let node = self.vfs.get(&from)?;
        if node == Node::Absent {
            return Err(refused(MoveProblem::Missing));
        }
        match self.vfs.get(&to)? {
            Node::Absent => {}
            Node::File(_) if opt(v, "overwrite") && matches!(node, Node::File(_)) => {
                self.plan.overwritten.push(to.clone());
            }
            _ if opt(v, "ignoreIfExists") && !opt(v, "overwrite") => return Ok(()),
            _ => {
                return Err(refused(MoveProblem::Exists));
            }
        }
        self.vfs.ensure_parents(&to)?;
        match node {
            Node::File(f) => {
                self.vfs.set(&to, Node::File(f))?;
                self.vfs.set(&from, Node::Absent)?;
                self.vfs.touched.insert(to.clone());
            }
            Node::Dir => {
                let sub = self.vfs.subtree(&from)?;
                self.vfs.set(&to, Node::Dir)?;
                for (p, n) in &sub {
                    let Ok(suffix) = p.strip_prefix(&from) else {
                        continue;
                    };
                    let dest = to.join(suffix);
                    self.vfs.set(&dest, n.clone())?;
                    self.vfs.touched.insert(dest);
                }
                for (p, _) in sub.iter().rev() {
                    self.vfs.set(p, Node::Absent)?;
                }
                self.vfs.set(&from, Node::Absent)?;
            }
            Node::Absent => {}
        }
        self.seq += 1;
        self.moves.push((self.seq, from.clone(), to.clone()));
        self.plan.renamed.push((from, to));
        Ok(())
    }

    fn delete(&mut self, v: &Value) -> Result<(), OpError> {
        let root = self.vfs.root;
        let p = uri_path(root, self.protected, &v["uri"], "DeleteFile.uri")?;
        match self.vfs.get(&p)? {
            Node::Absent => {
                if opt(v, "ignoreIfNotExists") {
                    return Ok(());
                }
                return Err(rejected(EditFact::DeleteMissing { path: p }));
            }
            Node::File(_) => self.vfs.set(&p, Node::Absent)?,
            Node::Dir => {
                let sub = self.vfs.subtree(&p)?;
                if !sub.is_empty() && !opt(v, "recursive") {
                    return Err(rejected(EditFact::DeleteNonEmpty { path: p }));
                }
                for (q, _) in sub.iter().rev() {
                    self.vfs.set(q, Node::Absent)?;
                }
                self.vfs.set(&p, Node::Absent)?;
            }
        }
        self.plan.deleted.push(p);
        Ok(())
    }

    fn finish(mut self) -> EditPlan {
        let mut dirs_created = Vec::new();
        let mut dirs_removed = Vec::new();
        for (p, now) in &self.vfs.nodes {
            let before = self.vfs.initial.get(p).cloned().unwrap_or(Node::Absent);
            if before == *now {
                continue;
            }
            let image = |n: &Node| match n {
                Node::File(f) => Some(f.clone()),
                _ => None,
            };
            if matches!(now, Node::Dir) {
                dirs_created.push(p.clone());
            }
            if matches!(before, Node::Dir) {
                dirs_removed.push(p.clone());
            }
            let (b, a) = (image(&before), image(now));
            if b.is_some() || a.is_some() {
                self.plan.changes.push(FileChange {
                    path: p.clone(),
                    before: b,
                    after: a,
                });
            }
        }
        // BTreeMap order puts parents first.
        dirs_removed.reverse();
        self.plan.dirs_created = dirs_created;
        self.plan.dirs_removed = dirs_removed;
        // Where each text edit landed, under the file's final path.
        for (seq, path, offset, idx) in &self.landed {
            let mut p = path.clone();
            for (mseq, from, to) in &self.moves {
                if mseq > seq
                    && let Ok(suffix) = p.strip_prefix(from)
                {
                    p = if suffix.as_os_str().is_empty() {
                        to.clone()
                    } else {
                        to.join(suffix)
                    };
                }
            }
            let cp = idx.char_pos(*offset);
            let mut line = idx.line(cp.line).unwrap_or_default();
            let mut col = cp.col;
            if cp.line == 0 && line.starts_with(BOM) {
                line = &line[BOM.len_utf8()..];
                col = col.saturating_sub(1);
            }
            self.plan.edits.push(EditedAt {
                path: p,
                line: cp.line + 1,
                col: col + 1,
                text: line.to_string(),
            });
        }
        self.plan
    }
}

/// Validate a `WorkspaceEdit` from `server` (positions in `encoding`) and
/// compute its plan. `views` holds what the server has for the documents
/// scry opened in it (text and version); `protected`, the configuration
/// files no edit may write. Nothing is written.
pub fn build_plan(
    root: &Path,
    edit: &Value,
    encoding: Encoding,
    views: &HashMap<PathBuf, ServerView>,
    server: &str,
    protected: &Protected,
) -> Result<EditPlan, OpError> {
    if !edit.is_object() {
        return Err(rejected(EditFact::NoWorkspaceEdit {
            server: server.into(),
        }));
    }
    let mut b = Builder {
        vfs: Vfs::new(root),
        encoding,
        views,
        server,
        protected,
        plan: EditPlan::default(),
        landed: Vec::new(),
        moves: Vec::new(),
        seq: 0,
    };
    if let Some(ops) = edit["documentChanges"].as_array() {
        for op in ops {
            match op["kind"].as_str() {
                Some("create") => b.create(op)?,
                Some("rename") => b.rename(op)?,
                Some("delete") => b.delete(op)?,
                Some(k) => {
                    return Err(rejected(EditFact::UnknownOperation {
                        server: server.into(),
                        kind: k.into(),
                    }));
                }
                None => {
                    let path = uri_path(
                        root,
                        protected,
                        &op["textDocument"]["uri"],
                        "textDocument.uri",
                    )?;
                    let version = op["textDocument"]["version"].as_i64();
                    let Some(edits) = op["edits"].as_array() else {
                        return Err(rejected(EditFact::NoEdits {
                            server: server.into(),
                        }));
                    };
                    b.text_edits(&path, version, edits)?;
                }
            }
        }
    } else if let Some(map) = edit["changes"].as_object() {
        // Confine every path before looking at any content.
        let mut items = Vec::with_capacity(map.len());
        for (uri, edits) in map {
            let path = uri_path(root, protected, &Value::String(uri.clone()), "changes key")?;
            let Some(edits) = edits.as_array() else {
                return Err(rejected(EditFact::EditsNotAList {
                    server: server.into(),
                    uri: uri.clone(),
                }));
            };
            items.push((path, edits));
        }
        items.sort_by(|a, b| a.0.cmp(&b.0));
        for w in items.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(rejected(EditFact::TwoEditLists {
                    server: server.into(),
                    path: w[0].0.clone(),
                }));
            }
        }
        for (path, edits) in items {
            b.text_edits(&path, None, edits)?;
        }
    }
    let plan = b.finish();
    // Named paths were checked by `confine`; this also covers what a
    // directory rename or delete carries along.
    let all = plan.changes.iter().map(|c| &c.path);
    for p in all.chain(&plan.dirs_created).chain(&plan.dirs_removed) {
        if let Some(why) = refused(root, p, protected) {
            return Err(rejected(EditFact::Protected {
                path: p.clone(),
                why,
            }));
        }
    }
    Ok(plan)
}

/// Every path a `WorkspaceEdit` names, confined, for collecting the server's
/// views before planning. Stops at the first path outside the workspace.
pub fn named_paths(
    root: &Path,
    edit: &Value,
    protected: &Protected,
) -> Result<Vec<PathBuf>, OpError> {
    let mut out = Vec::new();
    if let Some(ops) = edit["documentChanges"].as_array() {
        for op in ops {
            for key in ["uri", "oldUri", "newUri"] {
                if !op[key].is_null() {
                    out.push(uri_path(root, protected, &op[key], key)?);
                }
            }
            if !op["textDocument"]["uri"].is_null() {
                out.push(uri_path(
                    root,
                    protected,
                    &op["textDocument"]["uri"],
                    "textDocument.uri",
                )?);
            }
        }
    } else if let Some(map) = edit["changes"].as_object() {
        for uri in map.keys() {
            out.push(uri_path(
                root,
                protected,
                &Value::String(uri.clone()),
                "changes key",
            )?);
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

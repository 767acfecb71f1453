//! Answers from a SCIP index (scry-index): the source between the live
//! server and the syntactic index.
//!
//! When it answers (decided in `order`, the one place of the answer order): the
//! question is one the index serves ([`serves`]), the workspace has an
//! index (built by `scry index` into the per-user cache, keyed by the
//! canonical root) that covers the asked file, and the live server cannot
//! answer yet — not installed, not started (it is started in the
//! background meanwhile), still indexing, just started, or crashed — or
//! its answer failed or came back empty while it indexed.
//!
//! Invariants: every such answer has `precision: "index"` and says what
//! built the index and when ([`IndexAbout`] in `Answer::from_index`; the
//! header scry-render words from it is `SCIP index (<indexer> <version>,
//! built <age> ago at <commit or time>)`); what `status` and `doctor` say
//! of an index is data too ([`status_of`], [`doctor_indexes`]);
//! a file changed since the index (size/mtime, then content hash) is never
//! answered from its old positions: a question about such a file is left to
//! the other sources, and locations in such files are left out with a count
//! — but for a fetched index (`index.remote`, see `remote`), whose
//! documents of files changed since its commit move across the git diff
//! (those on changed lines dropped, and both counted,
//! `Reason::IndexTranslated`); a local index wins over a fetched one;
//! the answer says how many indexed files changed; an index that cannot be
//! read (missing, corrupt, truncated, another version) is a note once and
//! the other sources answer; the source lines come from the disk.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use scry_index::cache::{self, Fresh, Source};
use scry_index::store::read::Index;
use scry_index::store::{Doc, Occ, Sym};
use scry_lsp_session::LineIndex;

use super::lower::{Label, Unlabelled};
use super::remote::{RemoteLoaded, RemoteSlot};
use super::syntactic::{MAX_REFERENCES, SourceLines};
use super::*;
use scry_model::limits::MAX_WORKSPACE_SYMBOLS;
use scry_model::name::SymbolName;
use scry_model::{DoctorIndex, IndexAbout, IndexOrigin, IndexStatus};

/// What `precision` says.
/// How long after its start a server that never reported indexing counts
/// as starting (rust-analyzer answers empty for a while before its first
/// progress report).
const STARTING_GRACE: Duration = Duration::from_secs(8);

/// The engine's index: loaded on first need, reloaded when its source
/// changes; a load failure is said once per distinct failure.
pub(crate) struct IndexSlot {
    pub(crate) cache: Option<PathBuf>,
    state: Mutex<SlotState>,
    pub(crate) fresh: Fresh,
    /// The fetched index (`index.remote`), when no local one exists.
    pub(crate) remote: RemoteSlot,
}

#[derive(Default)]
struct SlotState {
    loaded: Option<(Arc<Index>, Source)>,
    said: Option<Reason>,
    /// Why the configured index was not read (said once).
    refused: Option<String>,
}

impl IndexSlot {
    pub(crate) fn new(cache: Option<PathBuf>) -> IndexSlot {
        IndexSlot {
            cache,
            state: Mutex::default(),
            fresh: Fresh::default(),
            remote: RemoteSlot::default(),
        }
    }
}

/// One loaded index and what to say about it.
pub(crate) struct Loaded {
    pub(crate) ix: Arc<Index>,
    pub(crate) source: Source,
    /// A fetched index: where from, and the translation of its positions.
    pub(crate) remote: Option<Arc<RemoteLoaded>>,
}

impl Loaded {
    /// What built the index and when, and where it came from.
    fn about(&self) -> IndexAbout {
        let mut a = about(&self.ix, &self.source);
        if let Some(r) = &self.remote {
            a.origin = r.origin();
        }
        a
    }
}

/// What `status` and `doctor` report of a workspace's index: what built
/// it and when, files covered, `changed` (files changed since, of the
/// indexed ones) and the documents refused.
pub fn status_of(ix: &Index, source: &Source, changed: (u32, u32)) -> IndexStatus {
    let m = ix.meta();
    IndexStatus {
        about: about(ix, source),
        documents: m.documents,
        changed: changed.0,
        refused: m.refused,
        refused_first: m.refused_first.clone(),
        stale_unrefreshed: false,
    }
}

/// Who made the index: `scry index`, the daemon's background refresh, or
/// a configured (CI-built) one.
fn origin(ix: &Index, source: &Source) -> IndexOrigin {
    match (source, ix.meta().built_by.as_deref()) {
        (Source::Built(_), Some("daemon")) => IndexOrigin::RebuiltByDaemon,
        (Source::Built(_), _) => IndexOrigin::Built,
        (Source::Configured(p), _) => IndexOrigin::Configured { path: p.clone() },
    }
}

/// What built the index and when (its age now): the label of an answer
/// from it (`scry_render::index_label`) and the start of its status line.
pub fn about(ix: &Index, source: &Source) -> IndexAbout {
    let m = ix.meta();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    IndexAbout {
        tool: m.tool.clone(),
        tool_version: m.tool_version.clone(),
        commit: m.commit.clone(),
        built_at_secs: m.built_at,
        age_secs: now.saturating_sub(m.built_at),
        origin: origin(ix, source),
    }
}

/// What `doctor` reports of each SCIP index of the workspace at `root`
/// (canonical) with the per-user `cache`: the one `scry index` built (or
/// the daemon refreshed) and a configured CI-built one — which answers
/// ([`cache::pick`]: the newer), a configured one missing or refused. Reads
/// only converted forms that are current; converts and runs nothing.
pub fn doctor_indexes(
    cache: Option<&Path>,
    config: &scry_workspace::config::Config,
    root: &Path,
) -> Vec<DoctorIndex> {
    let Some(cache) = cache else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let configured = config.index_path(root).unwrap_or_else(|why| {
        out.push(DoctorIndex::PathRefused { why });
        None
    });
    let picked = cache::pick(cache, root, configured.as_deref()).map(Path::to_path_buf);
    let built = Source::Built(cache::dir_for(cache, root).join("index.scip"));
    if let Some((remote, _)) = &config.index.remote {
        let local = picked.is_some() || built.scip().exists();
        let fetched = cache::remote_fetched(cache, root);
        out.push(DoctorIndex::Remote {
            url: remote.shown(),
            cached: fetched.len() as u32,
            newest: fetched.first().map(|(commit, at)| {
                let age = SystemTime::now().duration_since(*at).unwrap_or_default();
                (commit.clone(), age.as_secs())
            }),
            answers: !local,
        });
    }
    let sources = configured
        .map(Source::Configured)
        .into_iter()
        .chain([built]);
    for source in sources {
        let Some(stat) = scry_index::store::stamp::stat(source.scip()) else {
            if let Source::Configured(path) = &source {
                out.push(DoctorIndex::Unreadable {
                    path: path.clone(),
                    why: scry_index::cache::unreadable(path),
                });
            }
            continue;
        };
        let answers = match &source {
            Source::Configured(p) => picked.as_ref() == Some(p),
            Source::Built(_) => picked.is_none(),
        };
        let db = cache::db_for(cache, root, &source);
        match cache::open_current(&db, source.scip(), stat, root) {
            Some(ix) => {
                let changed = Fresh::default().changed(root, &ix);
                out.push(DoctorIndex::Current {
                    status: status_of(&ix, &source, changed),
                    answers,
                });
            }
            None => out.push(DoctorIndex::NotConverted {
                origin: match &source {
                    Source::Built(_) => IndexOrigin::Built,
                    Source::Configured(p) => IndexOrigin::Configured { path: p.clone() },
                },
                answers,
            }),
        }
    }
    out
}

impl Engine {
    /// The workspace's index, loading (and converting) it when its source
    /// changed; `Err` carries the note to give once. Of a configured
    /// CI-built index (`index.path`) and the one `scry index` built, the
    /// newer is read ([`cache::pick`]).
    pub(crate) async fn index(&self) -> Result<Option<Loaded>, Option<Reason>> {
        self.index_within(Duration::ZERO).await
    }

    /// [`Engine::index`], waiting up to `wait` for a remote index being
    /// fetched (`index.remote`, read when there is no local index).
    pub(crate) async fn index_within(
        &self,
        wait: Duration,
    ) -> Result<Option<Loaded>, Option<Reason>> {
        let Some(cache_dir) = self.index.cache.clone() else {
            return Ok(None);
        };
        let root = self.ws.root().to_path_buf();
        let configured = match self.ws.config().index_path(&root) {
            Ok(c) => c,
            Err(why) => {
                // Said once; the built index (if any) still answers.
                let mut st = self.index.state.lock().unwrap_or_else(|e| e.into_inner());
                if st.refused.as_deref() != Some(why.as_str()) {
                    st.refused = Some(why.clone());
                    self.index_notes
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(Reason::IndexPathRefused { why });
                }
                None
            }
        };
        let want = cache::pick(&cache_dir, &root, configured.as_deref()).map(Path::to_path_buf);
        // No local index: the remote one, when one is configured.
        if want.is_none()
            && !cache::dir_for(&cache_dir, &root)
                .join("index.scip")
                .exists()
            && let Some((remote, _)) = self.ws.config().index.remote.clone()
        {
            let r = self.remote_index(&cache_dir, &remote, wait).await?;
            return Ok(Some(Loaded {
                ix: r.ix.clone(),
                source: Source::Configured(cache::remote_db(&cache_dir, &root, &r.commit)),
                remote: Some(r),
            }));
        }
        let current = {
            let st = self.index.state.lock().unwrap_or_else(|e| e.into_inner());
            st.loaded.clone()
        };
        if let Some((ix, source)) = &current {
            let same = match (&want, source) {
                (Some(p), Source::Configured(q)) => p == q,
                (None, Source::Built(_)) => true,
                _ => false,
            };
            let unchanged = same
                && scry_index::store::stamp::stat(source.scip()).is_some_and(|(s, m)| {
                    s == ix.meta().source_size && m == ix.meta().source_mtime_ns
                });
            if unchanged {
                return Ok(Some(Loaded {
                    ix: ix.clone(),
                    source: source.clone(),
                    remote: None,
                }));
            }
        }
        // No index for this root (the common case): a stat or two here,
        // no hop to the blocking pool on every question.
        if current.is_none()
            && want.is_none()
            && !cache::dir_for(&cache_dir, &root)
                .join("index.scip")
                .exists()
        {
            return Ok(None);
        }
        let r =
            tokio::task::spawn_blocking(move || cache::load(&cache_dir, &root, want.as_deref()))
                .await;
        let mut st = self.index.state.lock().unwrap_or_else(|e| e.into_inner());
        match r {
            Ok(Ok(Some((ix, source)))) => {
                let ix = Arc::new(ix);
                st.loaded = Some((ix.clone(), source.clone()));
                st.said = None;
                Ok(Some(Loaded {
                    ix,
                    source,
                    remote: None,
                }))
            }
            Ok(Ok(None)) => {
                st.loaded = None;
                Ok(None)
            }
            Ok(Err(e)) => {
                st.loaded = None;
                let note = Reason::IndexUnusable {
                    error: e.to_string(),
                };
                if st.said.as_ref() == Some(&note) {
                    Err(None)
                } else {
                    st.said = Some(note.clone());
                    Err(Some(note))
                }
            }
            Err(_) => Err(None),
        }
    }

    /// What `status` says of the index, when there is one, or the
    /// problem with it (`Err`).
    pub(crate) async fn index_status(&self) -> Result<Option<IndexStatus>, Option<Reason>> {
        match self.index().await {
            Ok(Some(l)) => {
                let root = self.ws.root().to_path_buf();
                let changed = self.index.fresh.changed(&root, &l.ix);
                let mut status = status_of(&l.ix, &l.source, changed);
                status.about = l.about();
                status.stale_unrefreshed = changed.0 > 0 && !self.refreshes_by_itself();
                Ok(Some(status))
            }
            Ok(None) => Ok(None),
            Err(note) => Err(note),
        }
    }

    /// Whether the workspace has a usable index (a problem with it is
    /// noted once, as [`Engine::indexed_answer`] would).
    /// `wait`: how long a remote index being fetched is waited for.
    pub(crate) async fn has_index(&self, wait: Duration) -> bool {
        match self.index_within(wait).await {
            Ok(Some(_)) => true,
            Ok(None) => false,
            Err(note) => {
                if let Some(n) = note {
                    self.index_notes
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(n);
                }
                false
            }
        }
    }

    /// Why the live server for the question's file cannot answer yet, when
    /// it cannot: `None` when it is running and ready.
    pub(crate) fn not_ready(&self, q: &Valid, asked: &AskedPath) -> Option<Reason> {
        self.server_waiting(q, asked, true)
    }

    /// [`Engine::not_ready`]; a server that is not running is started in
    /// the background only when `start`.
    pub(crate) fn server_waiting(
        &self,
        q: &Valid,
        asked: &AskedPath,
        start: bool,
    ) -> Option<Reason> {
        let abs = self.resolve_asked(asked)?.ok()?;
        let route = match self.ws.route(&abs) {
            Ok(r) => r,
            Err(e) => {
                let error = crate::call::workspace_error(e, q.action().name());
                return Some(Reason::Error { error });
            }
        };
        let running = self
            .ws
            .running()
            .into_iter()
            .find(|s| s.name() == route.spec.id && s.has_folder(&route.root));
        let Some(s) = running else {
            let id = route.spec.id.clone();
            if !start {
                return Some(Reason::ServerStarting { server: id });
            }
            // Start it meanwhile: the next question is answered live.
            let ws = self.ws.clone();
            // In the call's environment: the server it starts is the one
            // the call would (same binary, same pool key).
            tokio::spawn(scry_workspace::env::carry(async move {
                let _ = ws.session(&route).await;
            }));
            return Some(Reason::ServerStarting { server: id });
        };
        if !s.is_alive() {
            return Some(Reason::ServerNotRunning {
                server: s.name().to_string(),
            });
        }
        if let Some(ix) = s.state().indexing() {
            return Some(Reason::Indexing {
                server: s.name().to_string(),
                progress: ix,
            });
        }
        let (saw, _) = s.state().indexing_history();
        if !saw && s.uptime() < STARTING_GRACE {
            return Some(Reason::ServerStarting {
                server: s.name().to_string(),
            });
        }
        None
    }

    /// The answer from the index, or `None` when it has none for this
    /// question (no index, file not covered or changed, name not found, no
    /// location: then the next source answers); why the live server did not
    /// answer is added when that is known (`Unlabelled::label`).
    pub(crate) async fn indexed_answer(
        &self,
        q: &Valid,
        asked: &AskedPath,
    ) -> Result<Option<Unlabelled>, OpError> {
        let loaded = match self.index().await {
            Ok(Some(l)) => l,
            Ok(None) => return Ok(None),
            Err(note) => {
                if let Some(n) = note {
                    self.index_notes
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(n);
                }
                return Ok(None);
            }
        };
        let engine = self.clone();
        let q2 = q.clone();
        let abs = self.resolve_asked(asked).and_then(Result::ok);
        let r = tokio::task::spawn_blocking(move || engine.answer_from(&loaded, &q2, abs)).await;
        match r {
            Ok(Ok(a)) => Ok(a),
            Ok(Err(e)) => {
                tracing::warn!("index lookup failed: {e}");
                Ok(None)
            }
            Err(_) => Ok(None),
        }
    }

    /// `abs`: the question's path, resolved (`None`: none, or refused).
    fn answer_from(
        &self,
        l: &Loaded,
        q: &Valid,
        abs: Option<PathBuf>,
    ) -> std::io::Result<Option<Unlabelled>> {
        let ix = &l.ix;
        let root = self.ws.root().to_path_buf();
        let fresh = &self.index.fresh;
        let limit = self.ws.config().limits.max_file_bytes;
        let mut lines = SourceLines::new(&root, limit);
        let mut answer = Answer::new(
            q.action(),
            q.question(&root),
            navigate::empty_body(q.action()),
        );
        let mut left_out = LeftOut {
            remote: l.remote.clone(),
            ..LeftOut::default()
        };
        let mut external = None;
        let mut several = None;
        let body = if q.action() == Action::WorkspaceSymbols {
            let query = q.query().unwrap_or_default().to_string();
            let name = SymbolName::parse(&query).name;
            let mut symbols = Vec::new();
            for id in ix.symbols_named(&name, MAX_WORKSPACE_SYMBOLS)? {
                let s = ix.symbol_at(id)?;
                let Some((name, kind)) = scry_index::symbol::name_and_kind(&s.symbol) else {
                    continue;
                };
                let defs = self.locations(ix, &s, true, &mut lines, &mut left_out)?;
                for loc in defs.into_iter().take(1) {
                    symbols.push(SymbolItem {
                        name: name.clone(),
                        kind: kind.to_string(),
                        container: scry_index::symbol::containers(&s.symbol).pop(),
                        loc,
                    });
                }
            }
            if symbols.is_empty() {
                return Ok(None);
            }
            Body::WorkspaceSymbols { symbols, query }
        } else {
            let Some(abs) = abs else {
                return Ok(None);
            };
            let rel = abs.strip_prefix(&root).unwrap_or(&abs).to_path_buf();
            let Some(doc) = ix.document(&rel.to_string_lossy())? else {
                return Ok(None);
            };
            // The asked line as the index saw it: the same when the file
            // is as indexed; else, for an index of an earlier commit,
            // moved back across the diff (a changed line cannot be asked).
            let mut asked_line = q.line();
            let mut then_text = None;
            if !fresh.is_fresh(&root, &doc) {
                // Never answered from old positions: the other sources
                // answer (the syntactic one labels itself).
                let Some(h) = left_out.translatable(&root, &doc) else {
                    return Ok(None);
                };
                if q.action() == Action::Symbols {
                    return Ok(None);
                }
                if let Some(line) = q.line() {
                    let Some(then) = h.backward(line - 1) else {
                        return Ok(None);
                    };
                    asked_line = Some(then + 1);
                }
                let Some(text) = l.remote.as_ref().and_then(|r| r.text_then(&doc.path)) else {
                    return Ok(None);
                };
                then_text = Some(text);
            }
            if q.action() == Action::Symbols {
                let outline = self.outline(ix, &doc)?;
                if outline.is_empty() {
                    return Ok(None);
                }
                Body::Outline {
                    path: abs.clone(),
                    symbols: outline,
                }
            } else {
                let text = match then_text {
                    Some(t) => t,
                    None => match scry_base::disk::read_text(&abs, limit).ok().flatten() {
                        Some(t) => t,
                        None => return Ok(None),
                    },
                };
                let text = LineIndex::new(text);
                let Some(occ) = self.occurrence_asked(ix, &doc, &text, q, asked_line)? else {
                    return Ok(None);
                };
                let sym = ix.symbol_at(occ.symbol)?;
                let stubs = stubs_apart(&self.ws.config(), &abs);
                // The files holding a definition of the symbol, read once,
                // only for references or a question the stub rule applies to.
                let def_docs = if q.action() == Action::References || stubs.is_some() {
                    definition_docs(ix, &sym)?
                } else {
                    Vec::new()
                };
                let is_stub = |p: &Path| stubs.as_ref().is_some_and(|st| stub_beside_source(p, st));
                let body = match q.action() {
                    Action::Definition | Action::Declaration => Body::Locations {
                        locations: self.locations(ix, &sym, true, &mut lines, &mut left_out)?,
                    },
                    Action::References => {
                        if !scry_index::symbol::is_local(&sym.symbol) {
                            let name = scry_index::symbol::name_and_kind(&sym.symbol).map(|n| n.0);
                            match def_docs.iter().filter(|p| !is_stub(&root.join(p))).count() {
                                0 => external = name,
                                1 => {}
                                files => {
                                    several = name
                                        .map(|name| Reason::IndexSeveralDefinitions { name, files })
                                }
                            }
                        }
                        let mut locations =
                            self.locations(ix, &sym, false, &mut lines, &mut left_out)?;
                        // A trait method's references include those of the
                        // methods implementing it, as rust-analyzer answers.
                        for imp in trait_impls(ix, &sym)? {
                            locations.extend(self.locations(
                                ix,
                                &imp,
                                false,
                                &mut lines,
                                &mut left_out,
                            )?);
                        }
                        Body::Locations { locations }
                    }
                    Action::Implementation | Action::TypeDefinition => {
                        // The symbols the answer points at, then their
                        // definitions (one way for both actions).
                        let mut targets = Vec::new();
                        if q.action() == Action::Implementation {
                            for id in ix.implementors(&sym, 1000)? {
                                targets.push(ix.symbol_at(id)?);
                            }
                        } else {
                            for t in ix.info(&sym)?.type_definitions {
                                targets.extend(ix.symbol(&t)?);
                            }
                        }
                        let mut locations = Vec::new();
                        for s in &targets {
                            locations.extend(self.locations(
                                ix,
                                s,
                                true,
                                &mut lines,
                                &mut left_out,
                            )?);
                        }
                        Body::Locations { locations }
                    }
                    Action::Hover => {
                        let info = ix.info(&sym)?;
                        let mut parts = Vec::new();
                        if let Some(sig) = &info.signature
                            && !info.documentation.iter().any(|d| d.contains(sig.as_str()))
                        {
                            parts.push(format!("```{}\n{sig}\n```", doc.language.to_lowercase()));
                        }
                        parts.extend(info.documentation.iter().cloned());
                        Body::Hover {
                            text: parts.join("\n\n"),
                        }
                    }
                    _ => return Ok(None),
                };
                // Only a symbol the indexer merged with a stub's (defined
                // in a stub beside its source): another's uses in stubs
                // (`typing.Any`'s) are the server's too.
                let merged = def_docs.iter().any(|p| is_stub(&root.join(p)));
                match body {
                    Body::Locations { mut locations } if merged => {
                        locations.retain(|l| !is_stub(&l.path));
                        Body::Locations { locations }
                    }
                    other => other,
                }
            }
        };
        // Nothing to show (the index left the definition out, or every
        // location is in a changed file): the next source answers.
        if body.is_empty() {
            return Ok(None);
        }
        answer.body = body;
        answer.from_index = Some(Box::new(l.about()));
        answer.precision = Some(Precision::Index);
        if left_out.locations > 0 {
            answer.notes.push(Reason::IndexLeftOut {
                locations: left_out.locations,
                files: left_out.files.len(),
            });
        }
        if left_out.translated + left_out.refound + left_out.dropped > 0 {
            answer.notes.push(Reason::IndexTranslated {
                locations: left_out.translated,
                files: left_out.translated_files.len(),
                refound: left_out.refound,
                dropped: left_out.dropped,
            });
        }
        if let Some(name) = external {
            answer.notes.push(Reason::IndexExternal { name });
        }
        answer.notes.extend(several);
        // A fetched index's files changed since its commit are translated,
        // and the answer counts what moved or was left out: the count of
        // files changed since it was built would say it twice, at the cost
        // of a stat of every indexed file per answer (`status` still
        // says it).
        if l.remote.is_none() {
            let (changed, total) = fresh.changed(&root, ix);
            if changed > 0 {
                answer.notes.push(Reason::IndexChanged {
                    changed,
                    total,
                    refreshed: self.refreshes_by_itself(),
                });
            }
        }
        Ok(Some(Unlabelled {
            answer,
            label: Label::Index,
        }))
    }

    /// The occurrence the question is about in `doc` (its `text` as the
    /// index saw it): on the asked `line` (1-based, as the index saw it: at
    /// the column, or written as the name), else the name's definition in
    /// the file, else its first occurrence.
    fn occurrence_asked(
        &self,
        ix: &Index,
        doc: &Doc,
        text: &LineIndex,
        q: &Valid,
        line: Option<u32>,
    ) -> std::io::Result<Option<Occ>> {
        let name = q
            .symbol()
            .filter(|s| !s.trim().is_empty())
            .map(|s| SymbolName::parse(s).name);
        let written = |o: &Occ| -> Option<String> {
            if o.line != o.end_line {
                return None;
            }
            let l = text.line(o.line)?;
            Some(
                l.chars()
                    .skip(o.col as usize)
                    .take((o.end_col - o.col) as usize)
                    .collect(),
            )
        };
        let is_name = |o: &Occ| match &name {
            Some(n) => written(o).as_deref() == Some(n.as_str()),
            None => true,
        };
        if let Some(line) = line {
            let on = ix.occurrences_on_line(doc, line - 1)?;
            let at: Vec<Occ> = match q.column() {
                Some(c) => on
                    .iter()
                    .filter(|o| o.col < c && c <= o.end_col.max(o.col + 1))
                    .copied()
                    .collect(),
                None => on
                    .iter()
                    .filter(|o| name.is_some() && is_name(o))
                    .copied()
                    .collect(),
            };
            // Several symbols at one place (Rust's `S { field }` pattern: the
            // field and the binding): the live servers answer for what is
            // defined there, else for the local.
            let mut best: Option<(u8, Occ)> = None;
            for o in at {
                let rank = if o.is_definition() {
                    0
                } else if scry_index::symbol::is_local(&ix.symbol_at(o.symbol)?.symbol) {
                    1
                } else {
                    2
                };
                if best.is_none_or(|(r, _)| rank < r) {
                    best = Some((rank, o));
                }
            }
            return Ok(best.map(|(_, o)| o));
        }
        if name.is_none() {
            return Ok(None);
        }
        let mut first = None;
        let mut from = 0;
        while from < doc.occ_count {
            let chunk = ix.doc_occurrences(
                doc,
                from,
                scry_index::store::query::MAX_RECORDS_PER_READ as u32,
            )?;
            if chunk.is_empty() {
                break;
            }
            from += chunk.len() as u32;
            for o in chunk.iter().filter(|o| is_name(o)) {
                if o.is_definition() {
                    return Ok(Some(*o));
                }
                first.get_or_insert(*o);
            }
        }
        Ok(first)
    }

    /// A symbol's occurrences (definitions only when `defs`) as locations,
    /// those in changed files left out and counted.
    fn locations(
        &self,
        ix: &Index,
        s: &Sym,
        defs: bool,
        lines: &mut SourceLines,
        left_out: &mut LeftOut,
    ) -> std::io::Result<Vec<Loc>> {
        let root = self.ws.root();
        let mut out = Vec::new();
        let mut from = 0;
        let mut doc: Option<(u32, Doc, Fate)> = None;
        // What a location on a changed line is re-found by.
        let name = scry_index::symbol::name_and_kind(&s.symbol).map(|n| n.0);
        while from < s.occ_count && out.len() < MAX_REFERENCES {
            let chunk = ix.symbol_occurrences(s, from, 4096)?;
            if chunk.is_empty() {
                break;
            }
            from += chunk.len() as u32;
            for so in chunk {
                if defs && !so.occ.is_definition() {
                    continue;
                }
                if doc.as_ref().is_none_or(|(id, _, _)| *id != so.doc) {
                    let d = ix.doc_at(so.doc)?;
                    let f = if self.index.fresh.is_fresh(root, &d) {
                        Fate::Fresh
                    } else {
                        match left_out.translatable(root, &d) {
                            Some(h) => Fate::Moved(h),
                            None => Fate::Stale,
                        }
                    };
                    doc = Some((so.doc, d, f));
                }
                let Some((_, d, fate)) = &doc else { continue };
                let mut o = so.occ;
                match fate {
                    Fate::Fresh => {}
                    Fate::Stale => {
                        left_out.locations += 1;
                        if !left_out.files.contains(&d.path) {
                            left_out.files.push(d.path.clone());
                        }
                        continue;
                    }
                    // Both ends must translate (a range across a
                    // changed line is not the one indexed).
                    Fate::Moved(h) => match (h.forward(o.line), h.forward(o.end_line)) {
                        (Some(l), Some(el)) => {
                            o.line = l;
                            o.end_line = el;
                            left_out.translated += 1;
                            if !left_out.translated_files.contains(&d.path) {
                                left_out.translated_files.push(d.path.clone());
                            }
                        }
                        // On a changed line: found again by name on the line
                        // it became, else dropped.
                        _ => {
                            let limit = self.ws.config().limits.max_file_bytes;
                            let found = name
                                .as_deref()
                                .and_then(|n| left_out.refind(root, limit, &d.path, h, &o, n));
                            let Some((line, col)) = found else {
                                left_out.dropped += 1;
                                continue;
                            };
                            o.end_col = col + (o.end_col - o.col);
                            (o.line, o.end_line, o.col) = (line, line, col);
                            left_out.refound += 1;
                        }
                    },
                }
                // A module's own definition (its whole file) is where a
                // definition answer goes, not one of its references: the
                // live servers list the `mod` line and the uses.
                if !defs && o.is_definition() && !names_something(&o) {
                    continue;
                }
                let mut loc = lines.loc(Path::new(&d.path), o.line, o.col, o.end_col);
                loc.end_line = o.end_line + 1;
                out.push(loc);
                if out.len() >= MAX_REFERENCES {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// A document's outline, nested as the live servers nest it: its named
    /// definitions (not locals, parameters or a module's own unnamed one),
    /// each under the symbol its descriptors name as its parent when this
    /// document defines it (a method under its class, a field under its
    /// struct) or, for Rust, under its impl block (`impl Iterator for
    /// Either<L, R>`, from the block's extent); each spans its SCIP
    /// enclosing range where the index gives one. In position order.
    fn outline(&self, ix: &Index, doc: &Doc) -> std::io::Result<Vec<SymbolNode>> {
        use scry_index::symbol::{self, Suffix};
        let extents = ix.extents(doc)?;
        let mut nodes: Vec<(String, SymbolNode)> = Vec::new();
        let mut by_symbol: HashMap<String, usize> = HashMap::new();
        let mut from = 0;
        while from < doc.occ_count {
            let chunk = ix.doc_occurrences(
                doc,
                from,
                scry_index::store::query::MAX_RECORDS_PER_READ as u32,
            )?;
            if chunk.is_empty() {
                break;
            }
            from += chunk.len() as u32;
            for o in chunk.iter().filter(|o| o.is_definition()) {
                if !names_something(o) {
                    continue;
                }
                let s = ix.symbol_at(o.symbol)?;
                let named = symbol::descriptors(&s.symbol).last().is_some_and(|(_, k)| {
                    !matches!(k, Suffix::Parameter | Suffix::TypeParameter | Suffix::Meta)
                });
                if !named || by_symbol.contains_key(&s.symbol) {
                    continue;
                }
                let Some((name, kind)) = symbol::name_and_kind(&s.symbol) else {
                    continue;
                };
                let end_line = extents
                    .iter()
                    .find(|e| e.symbol == o.symbol && (e.line, e.col) == (o.line, o.col))
                    .map_or(o.end_line, |e| e.end_line);
                by_symbol.insert(s.symbol.clone(), nodes.len());
                nodes.push((
                    s.symbol,
                    SymbolNode {
                        name,
                        kind: kind.to_string(),
                        detail: None,
                        line: o.line + 1,
                        col: o.col + 1,
                        end_line: end_line + 1,
                        children: Vec::new(),
                    },
                ));
            }
        }
        for e in &extents {
            let s = ix.symbol_at(e.symbol)?;
            let Some(name) = symbol::impl_name(&s.symbol) else {
                continue;
            };
            if by_symbol.contains_key(&s.symbol) {
                continue;
            }
            by_symbol.insert(s.symbol.clone(), nodes.len());
            nodes.push((
                s.symbol,
                SymbolNode {
                    name,
                    kind: "object".into(),
                    detail: None,
                    line: e.line + 1,
                    col: e.col + 1,
                    end_line: e.end_line + 1,
                    children: Vec::new(),
                },
            ));
        }
        // Each node's parent: the nearest enclosing symbol with a node.
        let parent_of: Vec<Option<usize>> = nodes
            .iter()
            .map(|(sym, _)| {
                let mut p = symbol::parent(sym);
                while let Some(ps) = p {
                    if let Some(&i) = by_symbol.get(&ps) {
                        return Some(i);
                    }
                    p = symbol::parent(&ps);
                }
                None
            })
            .collect();
        let mut order: Vec<usize> = (0..nodes.len()).collect();
        order.sort_by_key(|&i| (nodes[i].1.line, nodes[i].1.col));
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        let mut roots = Vec::new();
        for &i in &order {
            match parent_of[i] {
                Some(p) => children[p].push(i),
                None => roots.push(i),
            }
        }
        let mut slots: Vec<Option<SymbolNode>> = nodes.into_iter().map(|(_, n)| Some(n)).collect();
        fn build(
            i: usize,
            slots: &mut [Option<SymbolNode>],
            children: &[Vec<usize>],
        ) -> SymbolNode {
            let mut n = slots[i].take().unwrap_or_else(|| SymbolNode {
                name: String::new(),
                kind: String::new(),
                detail: None,
                line: 0,
                col: 0,
                end_line: 0,
                children: Vec::new(),
            });
            n.children = children[i]
                .iter()
                .map(|&c| build(c, slots, children))
                .collect();
            n
        }
        Ok(roots
            .into_iter()
            .map(|r| build(r, &mut slots, &children))
            .collect())
    }
}

/// The methods of impl blocks implementing trait method `s`
/// (`…Interval#upper().` → `…impl#[ClassBytesRange][Interval]upper().`),
/// found by name: rust-analyzer writes no relationship between them.
fn trait_impls(ix: &Index, s: &Sym) -> std::io::Result<Vec<Sym>> {
    use scry_index::symbol::{Suffix, descriptors};
    let d = descriptors(&s.symbol);
    let [.., (owner, Suffix::Type), (method, Suffix::Method)] = d.as_slice() else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for id in ix.symbols_named(method, MAX_WORKSPACE_SYMBOLS)? {
        let cand = ix.symbol_at(id)?;
        let c = descriptors(&cand.symbol);
        if let [
            ..,
            (imp, Suffix::Type),
            (_, Suffix::TypeParameter),
            (tr, Suffix::TypeParameter),
            (m, Suffix::Method),
        ] = c.as_slice()
            && imp == "impl"
            && tr.rsplit("::").next() == Some(owner.as_str())
            && m == method
            && cand.id != s.id
        {
            out.push(cand);
        }
    }
    Ok(out)
}

/// Whether an occurrence covers a name: on one line and not empty
/// (rust-analyzer defines a module file over its whole text; other indexers
/// a module at 0:0–0:0).
fn names_something(o: &Occ) -> bool {
    o.line == o.end_line && o.col != o.end_col
}

/// The files (relative paths) holding a definition of `s`: none when it is
/// defined in a dependency or the standard library, outside what the index
/// covers; more than one when the indexer gave one symbol to several things.
fn definition_docs(ix: &Index, s: &Sym) -> std::io::Result<Vec<PathBuf>> {
    let mut docs: Vec<u32> = Vec::new();
    let mut from = 0;
    while from < s.occ_count {
        let chunk = ix.symbol_occurrences(s, from, 4096)?;
        if chunk.is_empty() {
            break;
        }
        for o in chunk.iter().filter(|o| o.occ.is_definition()) {
            if !docs.contains(&o.doc) {
                docs.push(o.doc);
            }
        }
        from += chunk.len() as u32;
    }
    docs.into_iter()
        .map(|d| Ok(PathBuf::from(ix.doc_at(d)?.path)))
        .collect()
}

/// The catalogue's stubs (stub extension → source extension, e.g. Python's
/// `pyi` → `py`, whichever server is enabled: the index answers when none
/// can) when `asked` is a source file they apply to, else `None`. Its
/// indexer gives a module and its stub one symbol (scip-python); asked in
/// the source, the live server lists neither the stub's definitions nor its
/// uses.
fn stubs_apart(
    config: &scry_workspace::config::Config,
    asked: &Path,
) -> Option<BTreeMap<String, String>> {
    let ext = asked.extension()?.to_str()?;
    let stubs: BTreeMap<String, String> = config
        .servers
        .iter()
        .filter_map(|s| s.indexer.as_ref())
        .flat_map(|i| i.stubs.clone())
        .collect();
    (!stubs.contains_key(ext) && stubs.values().any(|v| v == ext)).then_some(stubs)
}

/// Whether `path` is a stub with its source file beside it.
fn stub_beside_source(path: &Path, stubs: &BTreeMap<String, String>) -> bool {
    path.extension()
        .and_then(|e| stubs.get(e.to_str()?))
        .is_some_and(|source| path.with_extension(source).is_file())
}

/// What an answer left out (locations in files changed since the index)
/// or moved (an index of an earlier commit: locations translated across
/// the git diff, or dropped on changed lines).
#[derive(Default)]
struct LeftOut {
    locations: usize,
    files: Vec<String>,
    /// The fetched index answering, when it is one.
    remote: Option<Arc<RemoteLoaded>>,
    translated: usize,
    translated_files: Vec<String>,
    /// On changed lines: found again by name, and not.
    refound: usize,
    dropped: usize,
    /// The working tree's text of files re-found in, read once.
    texts: HashMap<String, Option<LineIndex>>,
}

impl LeftOut {
    /// The hunks that move `d`'s positions (its file changed since the
    /// index) to the working tree: only for a fetched index, a document
    /// converted against its file at the index's commit, and a file git
    /// can diff.
    fn translatable(&self, root: &Path, d: &Doc) -> Option<Arc<scry_index::translate::Hunks>> {
        let r = self.remote.as_ref()?;
        if !d.verified || d.hash == 0 {
            return None;
        }
        r.hunks(root, &d.path)
    }

    /// Where occurrence `o` (of `name`, on a changed line of `rel`) is
    /// now: on the line it became (a hunk replacing line for line), at
    /// its column when `name` is still written there, else where the line
    /// writes `name` once as a whole word; `None` otherwise.
    fn refind(
        &mut self,
        root: &Path,
        limit: u64,
        rel: &str,
        h: &scry_index::translate::Hunks,
        o: &Occ,
        name: &str,
    ) -> Option<(u32, u32)> {
        let n: Vec<char> = name.chars().collect();
        if o.line != o.end_line || (o.end_col - o.col) as usize != n.len() || n.is_empty() {
            return None;
        }
        let now = h.paired(o.line)?;
        let text = self
            .texts
            .entry(rel.to_string())
            .or_insert_with(|| {
                scry_base::disk::read_text(&root.join(rel), limit)
                    .ok()
                    .flatten()
                    .map(LineIndex::new)
            })
            .as_ref()?;
        let line: Vec<char> = text.line(now)?.chars().collect();
        let word = |c: &char| c.is_alphanumeric() || *c == '_';
        let at = |c: usize| {
            line.get(c..c + n.len()) == Some(&n[..])
                && (c == 0 || !word(&line[c - 1]))
                && line.get(c + n.len()).is_none_or(|x| !word(x))
        };
        if at(o.col as usize) {
            return Some((now, o.col));
        }
        let mut hits = (0..line.len()).filter(|&c| at(c));
        match (hits.next(), hits.next()) {
            (Some(c), None) => Some((now, c as u32)),
            _ => None,
        }
    }
}

/// What becomes of a document's locations in an answer.
enum Fate {
    /// Its file is as indexed.
    Fresh,
    /// Changed since, and translated through these hunks.
    Moved(Arc<scry_index::translate::Hunks>),
    /// Changed since: left out, counted.
    Stale,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stub_beside_its_source_is_left_out_only_when_asked_in_a_source() {
        let dir = tempfile::tempdir().unwrap();
        let p = |name: &str| dir.path().join(name);
        for f in ["a.py", "a.pyi", "lone.pyi", "b.py"] {
            std::fs::write(p(f), "").unwrap();
        }
        let config = scry_workspace::config::Config {
            servers: scry_workspace::catalog::builtins(),
            ..Default::default()
        };
        // Asked in a stub, or in a file of no stubbed language: no rule.
        assert!(stubs_apart(&config, &p("lone.pyi")).is_none());
        assert!(stubs_apart(&config, &p("main.rs")).is_none());
        // Asked in a source file: the stub beside its source is the
        // server's other symbol; a stub with no source is the only one.
        let stubs = stubs_apart(&config, &p("b.py")).expect("Python's stubs");
        assert!(stub_beside_source(&p("a.pyi"), &stubs));
        assert!(!stub_beside_source(&p("lone.pyi"), &stubs));
        assert!(!stub_beside_source(&p("a.py"), &stubs));
    }
}

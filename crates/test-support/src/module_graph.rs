//! The import graph between the modules of a crate, read from its sources.
//!
//! A module is a file of `src/` reached from a crate root (`lib.rs`, `main.rs`, `bin/*.rs`)
//! through `mod name;` declarations; inline modules (`mod tests { .. }`) belong to the file that
//! holds them. A module imports another when its code names a path that resolves into it:
//! `crate::a::b`, `super::x`, `self::y`, or a path that starts with a child module's name. A
//! name that a module re-exports (`pub use child::Name`) or imports (`use other::Name`) is
//! followed to the module that defines it, so `crate::Name` re-exported from `a` is an arrow to
//! `a`, not to the root. A `mod` declaration alone is not an import: a parent that only
//! assembles its children depends on none of them.
//!
//! An arrow from a module to one of the modules that contain it (its parent, the crate root) is
//! left out: a child may use what its parent holds (Rust makes a parent's private items visible
//! to its children for that), and a parent that calls its children is their context, not their
//! peer. Loops are therefore found between modules that are not nested in one another: siblings
//! and cousins, at every depth.
//!
//! The reading is lexical (comments, strings and character literals are skipped; `$crate` in
//! macros is not followed). It is exact for the paths Rust code of this workspace writes and
//! is what the import-loop test of every crate relies on.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module's path inside its crate, `""` for the root, `replay::phase` for `src/replay/phase.rs`.
pub type ModulePath = String;

/// The modules of one crate (one target root) and the imports between them.
#[derive(Debug, Default)]
pub struct ModuleGraph {
    /// Every module found from the root, with the file that holds it.
    pub files: BTreeMap<ModulePath, PathBuf>,
    /// Imports: module -> modules it names (never itself).
    pub imports: BTreeMap<ModulePath, BTreeSet<ModulePath>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    PathSep,
    Open,
    Close,
    Semi,
    Comma,
    Star,
    Other,
}

/// The tokens of Rust source that matter for paths: comments, strings, character literals and
/// lifetimes are dropped.
fn tokens(text: &str) -> Vec<Token> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if text[i..].starts_with("//") {
            i = text[i..].find('\n').map_or(b.len(), |n| i + n);
        } else if text[i..].starts_with("/*") {
            i = skip_block_comment(b, i);
        } else if c == b'"' {
            i = skip_string(b, i + 1);
        } else if (c == b'r' || c == b'b') && raw_string_start(b, i).is_some() {
            i = skip_raw_string(b, raw_string_start(b, i).unwrap());
        } else if c == b'b' && b.get(i + 1) == Some(&b'"') {
            i = skip_string(b, i + 2);
        } else if c == b'b' && b.get(i + 1) == Some(&b'\'') {
            i = skip_char_or_lifetime(b, i + 1);
        } else if c == b'\'' {
            i = skip_char_or_lifetime(b, i);
        } else if c == b'$' {
            // `$crate` and macro variables name nothing here.
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Token::Other);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &text[start..i];
            out.push(Token::Ident(
                word.strip_prefix("r#").unwrap_or(word).to_owned(),
            ));
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                // A `.` followed by a non-digit ends the number (`1.max(2)`, `x.0.foo`).
                if b[i] == b'.' && !b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                    break;
                }
                i += 1;
            }
            out.push(Token::Other);
        } else {
            let tok = match c {
                b':' if b.get(i + 1) == Some(&b':') => {
                    i += 1;
                    Token::PathSep
                }
                b'{' => Token::Open,
                b'}' => Token::Close,
                b';' => Token::Semi,
                b',' => Token::Comma,
                b'*' => Token::Star,
                _ => Token::Other,
            };
            i += 1;
            out.push(tok);
        }
    }
    out
}

fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0;
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            depth += 1;
            i += 2;
        } else if b[i..].starts_with(b"*/") {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// Past the closing quote of a string whose body starts at `i`.
fn skip_string(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// For `r"`, `r#"`, `br"`, `br#"` at `i`: the index of the first `#` or `"` after the `r`.
fn raw_string_start(b: &[u8], i: usize) -> Option<usize> {
    let r = if b[i] == b'b' { i + 1 } else { i };
    if b.get(r) != Some(&b'r') || (i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
    {
        return None;
    }
    let mut j = r + 1;
    while b.get(j) == Some(&b'#') {
        j += 1;
    }
    (b.get(j) == Some(&b'"')).then_some(r + 1)
}

fn skip_raw_string(b: &[u8], mut i: usize) -> usize {
    let mut hashes = 0;
    while b[i] == b'#' {
        hashes += 1;
        i += 1;
    }
    i += 1;
    while i < b.len() {
        if b[i] == b'"'
            && b[i + 1..]
                .iter()
                .take(hashes)
                .filter(|&&h| h == b'#')
                .count()
                == hashes
        {
            return i + 1 + hashes;
        }
        i += 1;
    }
    i
}

/// `'a'`, `'\n'`, `'\u{1F600}'` (a character) or `'a` (a lifetime or label), from the quote at `i`.
fn skip_char_or_lifetime(b: &[u8], i: usize) -> usize {
    if b.get(i + 1) == Some(&b'\\') {
        let mut j = i + 2;
        while j < b.len() && b[j] != b'\'' {
            j += 1;
        }
        return j + 1;
    }
    // One character (possibly multi-byte) then a quote: a character literal.
    let mut j = i + 2;
    while j < b.len() && (b[j] & 0xC0) == 0x80 {
        j += 1;
    }
    if b.get(j) == Some(&b'\'') {
        return j + 1;
    }
    // A lifetime: skip the name.
    let mut j = i + 1;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
        j += 1;
    }
    j
}

/// What one file says: the modules it declares, the paths it names, the names it binds by `use`.
#[derive(Debug, Default)]
struct FileFacts {
    /// `mod name;` declarations (file modules), relative to the file's module.
    children: Vec<String>,
    /// Paths named, each with the inline-module path (inside the file) where it appears.
    paths: Vec<(Vec<String>, Vec<String>)>,
    /// Names bound by `use` at the file's own level: name -> full path of the use.
    bindings: BTreeMap<String, Vec<String>>,
}

fn facts(text: &str) -> FileFacts {
    let toks = tokens(text);
    let mut facts = FileFacts::default();
    // Inline modules open at the brace depth recorded here.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let here: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
        match &toks[i] {
            Token::Open => depth += 1,
            Token::Close => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Token::Ident(w) if w == "mod" => {
                if let Some(Token::Ident(name)) = toks.get(i + 1) {
                    match toks.get(i + 2) {
                        Some(Token::Semi) if inline.is_empty() => facts.children.push(name.clone()),
                        Some(Token::Open) => {
                            inline.push((name.clone(), depth));
                            depth += 1;
                            i += 3;
                            continue;
                        }
                        _ => {}
                    }
                    i += 2;
                    continue;
                }
            }
            Token::Ident(w) if w == "use" => {
                let mut j = i + 1;
                let mut uses = Vec::new();
                use_tree(&toks, &mut j, Vec::new(), &mut uses);
                for (path, bound) in uses {
                    if here.is_empty()
                        && let Some(bound) = bound
                    {
                        facts.bindings.insert(bound, path.clone());
                    }
                    facts.paths.push((here.clone(), path));
                }
                i = j;
                continue;
            }
            // A path in code: `a::b::c`, not preceded by `::` (then it is a tail).
            Token::Ident(_)
                if toks.get(i + 1) == Some(&Token::PathSep)
                    && (i == 0 || toks[i - 1] != Token::PathSep) =>
            {
                let (path, next) = code_path(&toks, i);
                if path.len() > 1 {
                    facts.paths.push((here.clone(), path));
                }
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    facts
}

/// The segments of the path starting at `toks[i]`, and the index after it.
fn code_path(toks: &[Token], i: usize) -> (Vec<String>, usize) {
    let mut path = Vec::new();
    if let Token::Ident(first) = &toks[i] {
        path.push(first.clone());
    }
    let mut j = i + 1;
    while toks.get(j) == Some(&Token::PathSep) {
        match toks.get(j + 1) {
            Some(Token::Ident(seg)) => path.push(seg.clone()),
            _ => break,
        }
        j += 2;
    }
    (path, j)
}

/// Reads a use tree from `toks[*j]`, pushing each leaf path with the name it binds (`None` for a
/// glob); leaves `*j` after the tree.
fn use_tree(
    toks: &[Token],
    j: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let mut path = prefix;
    loop {
        match toks.get(*j) {
            Some(Token::PathSep) => *j += 1,
            Some(Token::Ident(seg)) if seg == "as" => {
                *j += 1;
                let alias = match toks.get(*j) {
                    Some(Token::Ident(a)) => Some(a.clone()),
                    _ => None,
                };
                *j += 1;
                out.push((path, alias));
                return;
            }
            Some(Token::Ident(seg)) => {
                path.push(seg.clone());
                *j += 1;
            }
            Some(Token::Star) => {
                *j += 1;
                out.push((path, None));
                return;
            }
            Some(Token::Open) => {
                *j += 1;
                loop {
                    match toks.get(*j) {
                        Some(Token::Close) => {
                            *j += 1;
                            return;
                        }
                        Some(Token::Comma) => *j += 1,
                        None => return,
                        _ => use_tree(toks, j, path.clone(), out),
                    }
                }
            }
            _ => {
                // `self` inside a group binds the group's own prefix.
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                }
                let bound = path.last().cloned();
                if !path.is_empty() {
                    out.push((path, bound));
                }
                return;
            }
        }
    }
}

fn join(parent: &str, name: &str) -> ModulePath {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}::{name}")
    }
}

/// Whether `a` is `m` or one of the modules that contain it (the root contains all).
fn is_ancestor_or_self(a: &str, m: &str) -> bool {
    a.is_empty() || a == m || m.strip_prefix(a).is_some_and(|rest| rest.starts_with("::"))
}

fn parent_of(module: &str) -> ModulePath {
    module
        .rsplit_once("::")
        .map_or(String::new(), |(p, _)| p.to_owned())
}

/// The file of module `name` declared in the file `decl` (module `decl_module`).
fn child_file(decl: &Path, is_mod_root: bool, name: &str) -> Option<PathBuf> {
    let dir = if is_mod_root {
        decl.parent()?.to_path_buf()
    } else {
        decl.with_extension("")
    };
    [
        dir.join(format!("{name}.rs")),
        dir.join(name).join("mod.rs"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

impl ModuleGraph {
    /// Reads the crate whose root file is `root` (`src/lib.rs`, `src/main.rs`, `src/bin/x.rs`).
    pub fn read(root: &Path) -> ModuleGraph {
        let mut graph = ModuleGraph::default();
        let mut facts_of: BTreeMap<ModulePath, FileFacts> = BTreeMap::new();
        let mut todo = vec![(String::new(), root.to_path_buf(), true)];
        while let Some((module, file, is_mod_root)) = todo.pop() {
            let text = fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
            let f = facts(&text);
            for child in &f.children {
                if let Some(p) = child_file(&file, is_mod_root, child) {
                    let is_root = p.file_name().is_some_and(|n| n == "mod.rs");
                    todo.push((join(&module, child), p, is_root));
                }
            }
            graph.files.insert(module.clone(), file);
            facts_of.insert(module, f);
        }
        for (module, f) in &facts_of {
            let mut deps = BTreeSet::new();
            for (inline, path) in &f.paths {
                let mut scope = module.clone();
                for m in inline {
                    scope = join(&scope, m);
                }
                if let Some(target) = graph.resolve(&facts_of, &scope, path, 0)
                    && !is_ancestor_or_self(&target, module)
                {
                    deps.insert(target);
                }
            }
            graph.imports.insert(module.clone(), deps);
        }
        graph
    }

    /// The file module that holds `module` (inline modules belong to their file).
    fn file_module(&self, module: &str) -> Option<ModulePath> {
        let mut m = module.to_owned();
        loop {
            if self.files.contains_key(&m) {
                return Some(m);
            }
            if m.is_empty() {
                return None;
            }
            m = parent_of(&m);
        }
    }

    /// The file module that `path`, named in `scope`, resolves into; `None` for other crates.
    fn resolve(
        &self,
        facts_of: &BTreeMap<ModulePath, FileFacts>,
        scope: &str,
        path: &[String],
        hops: usize,
    ) -> Option<ModulePath> {
        let mut segs = path.iter().peekable();
        let mut at = match segs.peek().map(|s| s.as_str()) {
            Some("crate") => {
                segs.next();
                String::new()
            }
            Some("self") => {
                segs.next();
                scope.to_owned()
            }
            Some("super") => {
                let mut m = scope.to_owned();
                while segs.peek().is_some_and(|s| *s == "super") {
                    segs.next();
                    m = parent_of(&m);
                }
                m
            }
            Some(first) if self.files.contains_key(&join(scope, first)) => scope.to_owned(),
            Some(first) => {
                // A name the file binds by `use`: continue from where it points.
                let file = self.file_module(scope)?;
                let bound = facts_of.get(&file)?.bindings.get(first)?;
                if hops >= 8 {
                    return None;
                }
                let mut whole = bound.clone();
                whole.extend(path[1..].iter().cloned());
                return self.resolve(facts_of, &file, &whole, hops + 1);
            }
            None => return None,
        };
        while let Some(seg) = segs.peek() {
            let next = join(&at, seg);
            if self.files.contains_key(&next) {
                at = next;
                segs.next();
            } else {
                break;
            }
        }
        let at = self.file_module(&at)?;
        // Follow a name the module binds by `use` to where it comes from.
        if let Some(name) = segs.next()
            && hops < 8
            && let Some(bound) = facts_of.get(&at).and_then(|f| f.bindings.get(name))
            && let Some(origin) = self.resolve(facts_of, &at, bound, hops + 1)
        {
            return Some(origin);
        }
        Some(at)
    }

    /// The import loops: each strongly connected set of two or more modules, with one cycle
    /// through it (as the modules along it, the first repeated at the end).
    pub fn loops(&self) -> Vec<(BTreeSet<ModulePath>, Vec<ModulePath>)> {
        strongly_connected(&self.imports)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let cycle = cycle_within(&self.imports, &c);
                (c, cycle)
            })
            .collect()
    }
}

/// Tarjan's strongly connected components of `graph`.
fn strongly_connected(
    graph: &BTreeMap<ModulePath, BTreeSet<ModulePath>>,
) -> Vec<BTreeSet<ModulePath>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: Vec<BTreeSet<ModulePath>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, n: &'g str) {
            let i = self.index.len();
            self.index.insert(n, i);
            self.low.insert(n, i);
            self.stack.push(n);
            self.on_stack.insert(n);
            for m in self.graph.get(n).into_iter().flatten() {
                let m = m.as_str();
                if !self.index.contains_key(m) {
                    self.visit(m);
                    let l = self.low[n].min(self.low[m]);
                    self.low.insert(n, l);
                } else if self.on_stack.contains(m) {
                    let l = self.low[n].min(self.index[m]);
                    self.low.insert(n, l);
                }
            }
            if self.low[n] == self.index[n] {
                let mut c = BTreeSet::new();
                while let Some(m) = self.stack.pop() {
                    self.on_stack.remove(m);
                    c.insert(m.to_owned());
                    if m == n {
                        break;
                    }
                }
                self.out.push(c);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for n in graph.keys() {
        if !walk.index.contains_key(n.as_str()) {
            walk.visit(n);
        }
    }
    walk.out
}

/// A shortest cycle through the first module of `component`, staying inside it.
fn cycle_within(
    graph: &BTreeMap<ModulePath, BTreeSet<ModulePath>>,
    component: &BTreeSet<ModulePath>,
) -> Vec<ModulePath> {
    let start = component.iter().next().expect("non-empty component");
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut frontier = vec![start.as_str()];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for n in frontier {
            for m in graph.get(n).into_iter().flatten() {
                if !component.contains(m) {
                    continue;
                }
                if m == start {
                    let mut path = vec![start.clone()];
                    let mut at = n;
                    while at != start {
                        path.push(at.to_owned());
                        at = came_from[at];
                    }
                    path.push(start.clone());
                    path.reverse();
                    return path;
                }
                if !came_from.contains_key(m.as_str()) {
                    came_from.insert(m, n);
                    next.push(m.as_str());
                }
            }
        }
        frontier = next;
    }
    unreachable!("a strongly connected component has a cycle")
}

/// The label of a module in messages: `crate` for the root.
pub fn label(module: &str) -> &str {
    if module.is_empty() { "crate" } else { module }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> BTreeMap<ModulePath, BTreeSet<ModulePath>> {
        let mut g: BTreeMap<ModulePath, BTreeSet<ModulePath>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    }

    #[test]
    fn components_and_cycles() {
        let g = graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e")]);
        let loops: Vec<_> = strongly_connected(&g)
            .into_iter()
            .filter(|c| c.len() > 1)
            .collect();
        assert_eq!(loops.len(), 1);
        assert_eq!(
            loops[0],
            ["a", "b", "c"].iter().map(|s| s.to_string()).collect()
        );
        assert_eq!(cycle_within(&g, &loops[0]), ["a", "b", "c", "a"]);
        let acyclic = graph(&[("a", "b"), ("b", "c"), ("a", "c")]);
        assert!(strongly_connected(&acyclic).iter().all(|c| c.len() == 1));
    }

    #[test]
    fn paths_and_use_trees_are_read() {
        let f = facts(
            "use crate::{signal, queue::Queue as Q, memory::*};\n\
             use super::x::{self, y};\n\
             // crate::commented::out\n\
             let s = \"crate::in_string\"; let c = '{'; let l: &'a str;\n\
             let r = r#\"crate::raw\"#;\n\
             fn f() { crate::memory::find(1); x::y::z(); a.b::<T>(); }\n\
             mod inner { use super::Thing; }\n\
             mod child;\n",
        );
        assert_eq!(f.children, ["child"]);
        let paths: Vec<String> = f
            .paths
            .iter()
            .map(|(inline, p)| format!("{}|{}", inline.join("::"), p.join("::")))
            .collect();
        assert_eq!(
            paths,
            [
                "|crate::signal",
                "|crate::queue::Queue",
                "|crate::memory",
                "|super::x",
                "|super::x::y",
                "|crate::memory::find",
                "|x::y::z",
                "inner|super::Thing",
            ]
        );
        assert_eq!(f.bindings["Q"], ["crate", "queue", "Queue"]);
        assert_eq!(f.bindings["x"], ["super", "x"]);
        assert!(
            !f.bindings.contains_key("Thing"),
            "inline-module uses stay inside"
        );
    }

    #[test]
    fn modules_resolve_through_files_and_re_exports() {
        let dir = std::env::temp_dir().join(format!("module-graph-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("a")).unwrap();
        fs::write(dir.join("lib.rs"), "mod a; mod b;\npub use a::Thing;\n").unwrap();
        fs::write(dir.join("a/mod.rs"), "mod inner;\npub use inner::Thing;\n").unwrap();
        fs::write(dir.join("a/inner.rs"), "pub struct Thing;\n").unwrap();
        fs::write(
            dir.join("b.rs"),
            "use crate::Thing;\n#[cfg(test)] mod tests { use super::*; }\n",
        )
        .unwrap();
        let g = ModuleGraph::read(&dir.join("lib.rs"));
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            g.files.keys().map(String::as_str).collect::<Vec<_>>(),
            ["", "a", "a::inner", "b"]
        );
        assert_eq!(g.imports["b"], ["a::inner".to_string()].into());
        assert_eq!(g.imports[""], ["a::inner".to_string()].into());
        assert!(g.loops().is_empty());
    }
}

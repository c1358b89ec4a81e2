//! The module layers of `src/` (see "Architecture" in `docs/vhsa.md`): no import loop among the
//! modules, and nothing below the entry layer imports it.
//!
//! A module is a top-level file or directory of `src/`; it depends on another when its source
//! names `crate::<other>`. Inside `src/api/`, the children are checked the same way through
//! `super::<sibling>` (the parent `mod.rs` only assembles them and is left out).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("read src") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Names following `prefix` (identifiers), e.g. `crate::signal::get` gives `signal`; also the
/// items of `use crate::{a, b}` groups.
fn referenced(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<String>()
    };
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find(prefix) {
            let after = &rest[i + prefix.len()..];
            if let Some(group) = after.strip_prefix('{') {
                for item in group.split('}').next().unwrap_or("").split(',') {
                    let name = ident(item.trim());
                    if !name.is_empty() {
                        out.insert(name);
                    }
                }
            } else {
                let name = ident(after);
                if !name.is_empty() {
                    out.insert(name);
                }
            }
            rest = after;
        }
    }
    out
}

fn module_of(file: &Path, root: &Path) -> String {
    let rel = file.strip_prefix(root).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    first.trim_end_matches(".rs").to_owned()
}

/// A dependency cycle in `graph`, if there is one (as the list of modules along it).
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(1) => {
                let start = path.iter().position(|p| p == n).unwrap();
                let mut c = path[start..].to_vec();
                c.push(n.to_owned());
                return Some(c);
            }
            Some(2) => return None,
            _ => {}
        }
        state.insert(n.to_owned(), 1);
        path.push(n.to_owned());
        for m in graph.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, graph, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

fn top_level_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(f, &root)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let m = module_of(f, &root);
        let text = fs::read_to_string(f).unwrap();
        let deps: Vec<String> = referenced(&text, "crate::")
            .into_iter()
            .filter(|d| *d != m && modules.contains(d))
            .collect();
        graph.entry(m).or_default().extend(deps);
    }
    graph
}

#[test]
fn no_import_loop_among_modules() {
    let graph = top_level_graph();
    assert!(
        graph.contains_key("api") && graph.contains_key("queue"),
        "unexpected layout: {graph:?}"
    );
    if let Some(c) = cycle(&graph) {
        panic!("import loop among vhsa's modules: {}", c.join(" -> "));
    }
}

#[test]
fn only_the_entry_layer_imports_it() {
    let graph = top_level_graph();
    for (m, deps) in &graph {
        assert!(
            !deps.contains("api"),
            "module `{m}` imports the entry layer `api`; entries sit above the domain"
        );
    }
}

#[test]
fn no_import_loop_among_the_entry_modules() {
    let dir = src().join("api");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "mod" {
            continue;
        }
        let text = fs::read_to_string(&p).unwrap();
        let deps: BTreeSet<String> = referenced(&text, "super::")
            .into_iter()
            .filter(|d| *d != name)
            .collect();
        graph.insert(name, deps);
    }
    let known: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| known.contains(d));
    }
    if let Some(c) = cycle(&graph) {
        panic!("import loop among the entry modules: {}", c.join(" -> "));
    }
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    assert_eq!(cycle(&g), None);
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        cycle(&g),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    assert_eq!(
        referenced(
            "use crate::{signal, queue::Queue};\nlet x = crate::memory::find(1); // crate::api",
            "crate::"
        ),
        ["memory", "queue", "signal"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
}

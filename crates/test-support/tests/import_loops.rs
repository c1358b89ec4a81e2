//! No import loop between the modules of any crate of the workspace.
//!
//! Every member of the root `Cargo.toml` is read the same way (`test_support::module_graph`):
//! each crate root (`src/lib.rs`, `src/main.rs`, `src/bin/*.rs`) and the module files its `mod`
//! declarations reach, with an arrow wherever a module names a path into another. A loop is a
//! set of modules that reach each other; it is reported with one cycle through it. Arrows from a
//! module up to a module that contains it are not part of any loop (see the reader's notes).
//!
//! Loops not yet removed are listed once, below, as an expectation that must match exactly: a
//! loop that appears fails the test, and so does a listed loop that has gone (shrink the list in
//! the same change).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use test_support::module_graph::{ModuleGraph, label};

/// Loops known today, per crate root (relative to the workspace), each as the modules in it.
/// Nothing may be added here: each entry goes when the change that breaks its loop lands. Every
/// loop found so far is gone (the tool crate's centre, the emulator's `dispatch`/`exec`), so
/// the list is empty and any loop fails the test.
const KNOWN_LOOPS: &[(&str, &[&str])] = &[];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// The members listed in the workspace's `Cargo.toml` (`members = [".", "crates/x", ...]`).
fn members(root: &Path) -> Vec<String> {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).expect("read Cargo.toml");
    let start = manifest.find("members").expect("workspace members");
    let list = &manifest[start..];
    let list = &list[list.find('[').unwrap() + 1..list.find(']').unwrap()];
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty())
        .collect()
}

/// Every crate root of every member, relative to the workspace (`crates/vhsa/src/lib.rs`).
fn crate_roots(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for member in members(root) {
        let src = root.join(&member).join("src");
        let mut files = vec![src.join("lib.rs"), src.join("main.rs")];
        if let Ok(bins) = fs::read_dir(src.join("bin")) {
            let mut bins: Vec<PathBuf> = bins.map(|e| e.unwrap().path()).collect();
            bins.sort();
            files.extend(
                bins.into_iter()
                    .filter(|p| p.extension().is_some_and(|x| x == "rs")),
            );
        }
        for f in files.into_iter().filter(|f| f.is_file()) {
            out.push(f.strip_prefix(root).unwrap().to_string_lossy().into_owned());
        }
    }
    out
}

fn describe(loops: &BTreeMap<String, Vec<String>>) -> String {
    loops
        .iter()
        .map(|(set, cycle)| format!("  {{{set}}}: {}", cycle.join(" -> ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The loops of one crate root: the modules of each (sorted, comma-separated) -> one cycle.
fn loops_of(root: &Path, crate_root: &str) -> BTreeMap<String, Vec<String>> {
    let graph = ModuleGraph::read(&root.join(crate_root));
    graph
        .loops()
        .into_iter()
        .map(|(set, cycle)| {
            let set: Vec<&str> = set.iter().map(|m| label(m)).collect();
            let cycle = cycle.iter().map(|m| label(m).to_owned()).collect();
            (set.join(", "), cycle)
        })
        .collect()
}

#[test]
fn no_import_loop_in_any_crate() {
    let root = workspace();
    let roots = crate_roots(&root);
    for expected in [
        "src/lib.rs",
        "crates/vhsa/src/lib.rs",
        "crates/amdgpu-emu/src/lib.rs",
        "crates/kreplay-cli/src/main.rs",
        "crates/sqtt-pass/src/lib.rs",
        "crates/hsa-abi/src/lib.rs",
    ] {
        assert!(
            roots.iter().any(|r| r == expected),
            "{expected} not found among the crate roots {roots:?}"
        );
    }
    for (known_root, _) in KNOWN_LOOPS {
        assert!(
            roots.iter().any(|r| r == known_root),
            "{known_root} is no crate root"
        );
    }
    let mut failures = Vec::new();
    for crate_root in &roots {
        let found = loops_of(&root, crate_root);
        let known: BTreeSet<String> = KNOWN_LOOPS
            .iter()
            .filter(|(r, _)| r == crate_root)
            .map(|(_, set)| set.join(", "))
            .collect();
        let new: BTreeMap<String, Vec<String>> = found
            .iter()
            .filter(|(set, _)| !known.contains(*set))
            .map(|(s, c)| (s.clone(), c.clone()))
            .collect();
        if !new.is_empty() {
            failures.push(format!("{crate_root}: import loops\n{}", describe(&new)));
        }
        for gone in known.iter().filter(|set| !found.contains_key(*set)) {
            failures.push(format!(
                "{crate_root}: the known loop {{{gone}}} is gone (or changed): remove it from \
                 KNOWN_LOOPS{}",
                if found.is_empty() {
                    String::new()
                } else {
                    format!("; loops now:\n{}", describe(&found))
                }
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_crate_root_has_its_modules_read() {
    let root = workspace();
    for crate_root in crate_roots(&root) {
        let graph = ModuleGraph::read(&root.join(&crate_root));
        let dir = root.join(&crate_root).parent().unwrap().to_path_buf();
        // Each module file of a library root's directory is reached from it (no stray file that
        // the reading would miss); binaries share `src/` with a library and are not checked.
        if crate_root.ends_with("lib.rs") {
            let mut on_disk = Vec::new();
            collect_rs(&dir, &mut on_disk);
            let read: BTreeSet<&PathBuf> = graph.files.values().collect();
            let missed: Vec<_> = on_disk
                .iter()
                .filter(|p| !read.contains(p) && !p.starts_with(dir.join("bin")))
                .collect();
            assert!(
                missed.is_empty(),
                "{crate_root}: files not reached: {missed:?}"
            );
        }
    }
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("main.rs") {
            out.push(p);
        }
    }
}

#[test]
fn a_loop_added_to_a_crate_is_reported() {
    let dir = std::env::temp_dir().join(format!("import-loops-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("src/store")).unwrap();
    let write = |path: &str, text: &str| fs::write(dir.join(path), text).unwrap();
    write("src/lib.rs", "mod gate;\nmod store;\n");
    write(
        "src/gate.rs",
        "use crate::store::chunks::Chunk;\npub struct Gate;\n",
    );
    write("src/store/mod.rs", "pub mod chunks;\n");
    write("src/store/chunks.rs", "pub struct Chunk;\n");
    let before = loops_of(&dir, "src/lib.rs");
    // The chunk store now names the gate: gate -> store::chunks -> gate.
    write(
        "src/store/chunks.rs",
        "pub struct Chunk;\nfn f(_: &super::super::gate::Gate) {}\n",
    );
    let after = loops_of(&dir, "src/lib.rs");
    fs::remove_dir_all(&dir).unwrap();
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(
        after.into_iter().collect::<Vec<_>>(),
        [(
            "gate, store::chunks".to_string(),
            vec![
                "gate".to_string(),
                "store::chunks".to_string(),
                "gate".to_string()
            ]
        )]
    );
}

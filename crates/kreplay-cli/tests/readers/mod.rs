//! Independent readers of our outputs, in Python: `sqlite3` for the rocpd database and the
//! compiled protos of the `perfetto` package (in the project's `.venv/`, made by
//! `scripts/install-deps.sh`) for .pftrace files. Each prints one JSON document.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/readers")
        .join(name)
}

fn run_python(python: &Path, script_name: &str, file: &Path) -> Value {
    let out = Command::new(python)
        .arg(script(script_name))
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", python.display()));
    assert!(
        out.status.success(),
        "{script_name} {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the reader prints JSON")
}

/// The rocpd database as Python's sqlite3 module reads it.
#[allow(dead_code)]
pub fn rocpd(db: &Path) -> Value {
    run_python(Path::new("python3"), "rocpd_dump.py", db)
}

/// The Perfetto trace as the `perfetto` package's protos decode it.
#[allow(dead_code)]
pub fn pftrace(trace: &Path) -> Value {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-deps.sh, which creates the project's Python environment with the perfetto package",
        python.display()
    );
    run_python(&python, "pftrace_dump.py", trace)
}

/// The text of every `<title>` of an SVG file, after Python's XML parser accepted the file
/// as well-formed.
#[allow(dead_code)]
pub fn svg_titles(svg: &Path) -> Vec<String> {
    let code = "import json, sys, xml.etree.ElementTree as ET\n\
                root = ET.parse(sys.argv[1]).getroot()\n\
                print(json.dumps([t.text for t in root.iter('{http://www.w3.org/2000/svg}title')]))";
    let out = Command::new("python3")
        .args(["-c", code])
        .arg(svg)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{} is not well-formed XML: {}",
        svg.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON list of titles")
}

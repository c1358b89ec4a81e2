//! Tool loading as the real runtime does it: `HSA_TOOLS_LIB` (with quoting), `OnLoad` with the
//! live major-3 table, wrapping `hsa_queue_create`, priorities of preloaded tools, the
//! failed-tool list, `HSA_TOOLS_REPORT_LOAD_FAILURE`, `OnUnload` in reverse order, and
//! `hsa_init` from inside `OnLoad`.

mod c_programs;
use c_programs::*;
use std::path::{Path, PathBuf};

fn tool(dir: &Path, name: &str, defines: &[&str]) -> PathBuf {
    let out = dir.join(format!("lib{name}.so"));
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
    let mut args = vec![
        format!("-I{}", include.display()),
        "-shared".into(),
        "-fPIC".into(),
        format!("-DTOOL_NAME=\"{name}\""),
    ];
    args.extend(defines.iter().map(|d| d.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    test_support::compile_c(&c_dir().join("tool_probe.c"), &out, &args);
    out
}

/// Positions of `needles` in `haystack`'s lines, asserting each is present.
fn line_of(lines: &[&str], needle: &str) -> usize {
    lines
        .iter()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with `{needle}` in:\n{}", lines.join("\n")))
}

#[test]
fn tools_load_in_order_wrap_the_table_and_unload_in_reverse() {
    let dir = test_support::scratch_dir("vhsa-tools");
    let spaced = dir.join("with space");
    std::fs::create_dir_all(&spaced).unwrap();
    let first = tool(&spaced, "first", &[]);
    let refuser = tool(&dir, "refuser", &["-DTOOL_ACCEPT=0"]);
    let preloaded = tool(&dir, "preloaded", &["-DTOOL_PRIORITY=0"]);
    let app = program(&dir, "tools_app");
    let missing = dir.join("libmissing.so");

    let tools_lib = format!(
        "\"{}\" {} {}",
        first.display(),
        refuser.display(),
        missing.display()
    );
    let mut cmd = command(&app);
    cmd.env("HSA_TOOLS_LIB", tools_lib)
        .env("HSA_TOOLS_REPORT_LOAD_FAILURE", "1")
        .env("LD_PRELOAD", &preloaded);
    let out = run_ok(cmd);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();

    // Load order: HSA_TOOLS_LIB order, then the preloaded tool (priority 0 + 3).
    let l_first = line_of(&lines, "first: OnLoad");
    let l_refuser = line_of(&lines, "refuser: OnLoad");
    let l_pre = line_of(&lines, "preloaded: OnLoad");
    assert!(
        l_first < l_refuser && l_refuser < l_pre,
        "load order wrong:\n{text}"
    );
    assert!(
        lines[l_first].contains(
            "runtime_version=3 root_major=3 core_major=2 core_size=1016 amd_major=2 failed=0"
        ),
        "{text}"
    );
    assert!(lines[l_refuser].contains("failed=0"), "{text}");
    // The refusing tool and the missing library are on the failed list handed to later tools.
    assert!(lines[l_pre].contains("failed=2"), "{text}");
    assert!(
        lines[l_pre].contains(&format!("[{}]", refuser.display())),
        "{text}"
    );
    assert!(
        lines[l_pre].contains(&format!("[{}]", missing.display())),
        "{text}"
    );

    // The application's call goes through both wrappers, the last loaded outermost.
    let w_pre = line_of(&lines, "preloaded: hsa_queue_create size=128");
    let w_first = line_of(&lines, "first: hsa_queue_create size=128");
    let created = line_of(&lines, "app: queue created");
    assert!(w_pre < w_first && w_first < created, "{text}");
    assert!(
        !text.contains("refuser: hsa_queue_create"),
        "a refusing tool stays unloaded:\n{text}"
    );

    // OnUnload in reverse load order, on the last hsa_shut_down; the refusing tool gets none.
    let u_pre = line_of(&lines, "preloaded: OnUnload");
    let u_first = line_of(&lines, "first: OnUnload");
    let done = line_of(&lines, "app: done");
    assert!(
        created < u_pre && u_pre < u_first && u_first < done,
        "{text}"
    );
    assert!(!text.contains("refuser: OnUnload"), "{text}");
    // After the last shutdown the table is reset: the call after it is not wrapped.
    assert_eq!(text.matches("first: hsa_queue_create").count(), 1, "{text}");
    assert_eq!(
        text.matches("preloaded: hsa_queue_create").count(),
        1,
        "{text}"
    );

    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "Tool lib \"{}\" failed to load.",
            refuser.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "Tool lib \"{}\" failed to load.",
            missing.display()
        )),
        "{err}"
    );
}

#[test]
fn a_preloaded_tool_also_named_in_hsa_tools_lib_loads_once() {
    let dir = test_support::scratch_dir("vhsa-tools-once");
    let both = tool(&dir, "both", &["-DTOOL_PRIORITY=5"]);
    let app = program(&dir, "tools_app");
    let mut cmd = command(&app);
    // Named through a different path spelling than the preload.
    let spelled = dir.join(".").join(both.file_name().unwrap());
    cmd.env("HSA_TOOLS_LIB", &spelled).env("LD_PRELOAD", &both);
    let out = run_ok(cmd);
    let text = stdout(&out);
    assert_eq!(text.matches("both: OnLoad").count(), 1, "{text}");
    assert_eq!(text.matches("both: hsa_queue_create").count(), 1, "{text}");
    assert_eq!(text.matches("both: OnUnload").count(), 1, "{text}");
}

#[test]
fn load_failures_are_silent_without_the_report_variable() {
    let dir = test_support::scratch_dir("vhsa-tools-silent");
    let app = program(&dir, "tools_app");
    let mut cmd = command(&app);
    cmd.env("HSA_TOOLS_LIB", dir.join("libnothere.so"));
    let out = run_ok(cmd);
    assert!(!stderr(&out).contains("failed to load"), "{}", stderr(&out));
    assert!(stdout(&out).contains("app: done"));
}

#[test]
fn hsa_init_inside_on_load_is_an_error_not_a_deadlock() {
    let dir = test_support::scratch_dir("vhsa-tools-reenter");
    let reenter = tool(&dir, "reenter", &["-DTOOL_REENTER"]);
    let app = program(&dir, "tools_app");
    let mut cmd = command(&app);
    cmd.env("HSA_TOOLS_LIB", &reenter);
    let out = run_ok(cmd);
    let text = stdout(&out);
    assert!(
        text.contains("reenter: hsa_init from OnLoad -> 0x1000"),
        "{text}"
    );
    assert!(
        text.contains("reenter: hsa_iterate_agents from OnLoad -> 0x0 agents=2"),
        "{text}"
    );
    assert!(text.contains("app: done"), "{text}");
    assert!(
        stderr(&out).contains("hsa_init was called from inside a tool's OnLoad"),
        "{}",
        stderr(&out)
    );
}

//! `kreplay run` on a C application (system compiler, system HSA headers, linked with vhsa)
//! that dispatches on two GPU agents, each through its own queue.

mod readers;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn dispatches_on_two_agents_land_on_their_own_queues() {
    test_support::tool_lib();
    let scratch = test_support::scratch_dir("cli-two-gpus");
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let app = scratch.join("two_gpus");
    let include = format!("-I{}", manifest.join("../vhsa/include").display());
    test_support::compile_c(&manifest.join("tests/apps/two_gpus.c"), &app, &[&include]);
    let out_dir = scratch.join("out");
    let out = Command::new(env!("CARGO_BIN_EXE_kreplay"))
        .args(["run", "--runtime", "virtual", "--passes", "4", "-d"])
        .arg(&out_dir)
        .args(["-f", "json", "chrome", "rocpd", "pftrace"])
        .arg("--")
        .arg(&app)
        .env("VHSA_AGENTS", "gfx942,gfx90a")
        .env_remove("KREPLAY_TOOL_LIB")
        .env_remove("KREPLAY_VHSA_DIR")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("two_gpus: 2 gpus, verified"), "{stdout}");

    // 3 in-place dispatches per agent, 4 passes each; the application still saw +3.
    let doc: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("kreplay_results.json")).unwrap())
            .unwrap();
    let rows = doc["kreplay"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2 * 3 * 4);
    let mut per_agent: BTreeMap<
        String,
        (
            std::collections::BTreeSet<u64>,
            std::collections::BTreeSet<u64>,
        ),
    > = BTreeMap::new();
    for r in rows {
        assert_eq!(
            r["kernel"].as_str().map(|k| k.trim_end_matches(".kd")),
            Some("add_one")
        );
        let entry = per_agent
            .entry(r["agent_name"].as_str().unwrap().to_owned())
            .or_default();
        entry.0.insert(r["dispatch_id"].as_u64().unwrap());
        entry.1.insert(r["queue_id"].as_u64().unwrap());
    }
    assert_eq!(
        per_agent.keys().map(String::as_str).collect::<Vec<_>>(),
        ["gfx90a", "gfx942"]
    );
    let queues: Vec<u64> = per_agent
        .values()
        .map(|(ids, q)| {
            assert_eq!(ids.len(), 3);
            assert_eq!(q.len(), 1);
            *q.iter().next().unwrap()
        })
        .collect();
    assert_ne!(queues[0], queues[1]);

    // The trace has one named thread per queue, each with its 3 dispatch slices.
    let trace: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("kreplay_trace.json")).unwrap())
            .unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    for (agent, (_, q)) in &per_agent {
        let tid = *q.iter().next().unwrap();
        let name = events
            .iter()
            .find(|e| e["name"] == "thread_name" && e["tid"] == tid)
            .expect("thread named");
        assert_eq!(name["args"]["name"], format!("queue {tid} ({agent})"));
        let slices = events
            .iter()
            .filter(|e| e["cat"] == "dispatch" && e["tid"] == tid)
            .count();
        assert_eq!(slices, 3);
    }

    // rocpd (read by sqlite3): two GPU agents, each with its 3 dispatches of 4 passes.
    let db = readers::rocpd(&out_dir.join("kreplay_results.db"));
    assert_eq!(db["integrity"], "ok");
    let mut agents: Vec<&str> = db["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(a["type"], "GPU");
            a["name"].as_str().unwrap()
        })
        .collect();
    agents.sort_unstable();
    assert_eq!(agents, ["gfx90a", "gfx942"]);
    let dispatches = db["dispatches"].as_array().unwrap();
    for agent in ["gfx90a", "gfx942"] {
        let mine: Vec<&Value> = dispatches
            .iter()
            .filter(|d| d["agent_name"] == agent)
            .collect();
        assert_eq!(mine.len(), 3, "{agent}");
        assert!(mine.iter().all(|d| d["passes"] == 4));
    }
    assert_eq!(db["passes"].as_array().unwrap().len(), 6 * 4);

    // pftrace (decoded by the perfetto package): one agent track per agent, named by its node
    // and GPU index; under each a kernel track and a replay track, 3 slices on each.
    let pf = readers::pftrace(&out_dir.join("kreplay_results.pftrace"));
    assert_eq!(pf["errors"], Value::Array(vec![]));
    let tracks = pf["tracks"].as_array().unwrap();
    let process = tracks.iter().find(|t| !t["pid"].is_null()).unwrap();
    let agent_tracks: Vec<&Value> = tracks
        .iter()
        .filter(|t| t["parent"] == process["uuid"])
        .collect();
    assert_eq!(agent_tracks.len(), 2);
    let mut names: Vec<&str> = agent_tracks
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert!(
        names[0].starts_with("Agent 1 (GPU 0, ") && names[1].starts_with("Agent 2 (GPU 1, "),
        "{names:?}"
    );
    for a in agent_tracks {
        let queue: Vec<&Value> = tracks
            .iter()
            .filter(|t| t["parent"] == a["uuid"] && t["counter"] == false)
            .collect();
        assert_eq!(queue.len(), 2, "{a}");
        for q in queue {
            let tops = pf["slices"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["track"] == q["uuid"] && s["depth"] == 0)
                .count();
            assert_eq!(tops, 3, "{q}");
        }
    }

    let summary = std::fs::read_to_string(out_dir.join("kreplay_summary.txt")).unwrap();
    let line: Vec<&str> = summary.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(line[0].trim_end_matches(".kd"), "add_one");
    assert_eq!(&line[1..4], &["6", "6", "4"]);
    assert!(
        summary.contains("1 kernel, 6 dispatches, 6 replayed"),
        "{summary}"
    );
}

//! What the `kreplay run` end-to-end tests share: the command with a clean environment and the
//! bundled demo application.

#![allow(dead_code)] // each test binary uses its own part

use std::process::Command;

/// `kreplay`, with the variables that would change what it loads or runs removed from the
/// environment. The tool library and vhsa must be built next to the binary; this names the
/// missing one.
pub fn kreplay() -> Command {
    test_support::tool_lib();
    test_support::vhsa_lib_dir();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kreplay"));
    for var in [
        "HSA_TOOLS_LIB",
        "KREPLAY_TOOL_LIB",
        "KREPLAY_VHSA_DIR",
        "VHSA_FAULTS",
        "VHSA_AGENTS",
        "KREPLAY_PASSES",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// The bundled demo application.
pub fn demo_app() -> &'static str {
    env!("CARGO_BIN_EXE_kreplay-demo-app")
}

/// Bytes of a child's output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

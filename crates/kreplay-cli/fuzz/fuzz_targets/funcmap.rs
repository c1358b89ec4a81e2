//! Fuzzes the `.sqtt_funcmap` parser: any bytes give a map or an error, never a panic, and a
//! parsed map renders back to an equal map.
#![no_main]

use kreplay_cli::sqtt::funcmap::{Funcmap, render_section};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(map) = Funcmap::parse(data) {
        let again = Funcmap::parse(&render_section(&map)).expect("a rendered map parses");
        assert_eq!(again, map);
    }
});

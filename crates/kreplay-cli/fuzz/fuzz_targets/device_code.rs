//! Fuzzes the container readers (ELF, offload bundles, compressed bundles): any bytes give
//! code objects or an error, never a panic.
#![no_main]

use kreplay_cli::sqtt::device_code;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(objects) = device_code::code_objects(data) {
        for object in objects {
            let _ = device_code::inspect(&object.image);
        }
    }
});

//! vhsa loaded into the test process: initialised once with `VHSA_AGENTS=gfx942,gfx90a`, the
//! agents listed.

use hsa_abi::ffi::*;
use std::ffi::c_void;
use std::sync::OnceLock;

unsafe extern "C" fn collect_agent(agent: hsa_agent_t, data: *mut c_void) -> hsa_status_t {
    // SAFETY: `data` is the Vec passed by `agents`.
    unsafe { (*data.cast::<Vec<hsa_agent_t>>()).push(agent) };
    HSA_STATUS_SUCCESS
}

/// The CPU, gfx942 and gfx90a agents of the runtime, initialised on the first call.
pub fn agents() -> &'static [hsa_agent_t] {
    static AGENTS: OnceLock<Vec<hsa_agent_t>> = OnceLock::new();
    AGENTS.get_or_init(|| {
        // SAFETY: the only test setup of this binary, before any runtime call; the other tests
        // wait on this initializer.
        unsafe { std::env::set_var("VHSA_AGENTS", "gfx942,gfx90a") };
        let init: hsa_init_fn_t = test_support::vhsa_symbol("hsa_init");
        // SAFETY: plain runtime call.
        assert_eq!(unsafe { init.unwrap()() }, HSA_STATUS_SUCCESS);
        let iterate: hsa_iterate_agents_fn_t = test_support::vhsa_symbol("hsa_iterate_agents");
        let mut v: Vec<hsa_agent_t> = Vec::new();
        // SAFETY: the callback pushes into `v`, which outlives the call.
        let st = unsafe { iterate.unwrap()(Some(collect_agent), (&raw mut v).cast()) };
        assert_eq!(st, HSA_STATUS_SUCCESS);
        assert_eq!(v.len(), 3);
        v
    })
}

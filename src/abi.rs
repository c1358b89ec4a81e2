//! The C face's types and enums: the input of cbindgen (header `include/kreplay.h`). Plain data
//! of the ABI; this module imports nothing of the engine, so every layer may use it.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

/// Status codes of the C API. Values are never reused.
///
/// In C the type is a `uint32_t` (the enum documents the values): a function that receives a
/// status, such as `kreplay_status_string`, accepts any integer and treats unknown values as
/// unknown, never as undefined behaviour.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum kreplay_status_t {
    /// Success.
    KREPLAY_STATUS_SUCCESS = 0,
    /// An argument was NULL or out of range.
    KREPLAY_STATUS_INVALID_ARGUMENT = 1,
    /// A client is already registered in this process.
    KREPLAY_STATUS_ALREADY_CONFIGURED = 2,
    /// Called outside a PASS ENTER callback.
    KREPLAY_STATUS_NOT_ARMED = 3,
    /// A struct's `size` field is smaller than the fields the tool reads.
    KREPLAY_STATUS_SIZE_TOO_SMALL = 4,
    /// An internal failure (a panic was caught); the call had no effect.
    KREPLAY_STATUS_INTERNAL_ERROR = 5,
    /// This copy of the library is not the runtime's active tool: it was linked but not loaded
    /// through `HSA_TOOLS_LIB`, its `OnLoad` has not run yet or its `OnUnload` already ran, or
    /// `HSA_TOOLS_LIB` names another copy of `libkreplay.so` than the one the caller linked.
    KREPLAY_STATUS_NOT_LOADED = 6,
}

impl kreplay_status_t {
    /// Every status, in value order.
    pub const ALL: [kreplay_status_t; 7] = [
        kreplay_status_t::KREPLAY_STATUS_SUCCESS,
        kreplay_status_t::KREPLAY_STATUS_INVALID_ARGUMENT,
        kreplay_status_t::KREPLAY_STATUS_ALREADY_CONFIGURED,
        kreplay_status_t::KREPLAY_STATUS_NOT_ARMED,
        kreplay_status_t::KREPLAY_STATUS_SIZE_TOO_SMALL,
        kreplay_status_t::KREPLAY_STATUS_INTERNAL_ERROR,
        kreplay_status_t::KREPLAY_STATUS_NOT_LOADED,
    ];

    /// The status with value `v`, if there is one.
    pub fn from_u32(v: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|s| *s as u32 == v)
    }
}

/// Kinds of replay events delivered to `on_event` (a `uint32_t` in C).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum kreplay_event_kind_t {
    /// Before the pass count is asked; `pass` and timestamps are 0.
    KREPLAY_EVENT_CONFIG_ENTER = 1,
    /// After the snapshot (or the decision not to replay); `stats` set for replays.
    KREPLAY_EVENT_CONFIG_EXIT = 2,
    /// Before pass `pass` is submitted; `kreplay_pass_attach_packets` is allowed only here.
    KREPLAY_EVENT_PASS_ENTER = 3,
    /// After pass `pass` completed; timestamps and `stats` set.
    KREPLAY_EVENT_PASS_EXIT = 4,
    /// The loop stopped after pass `pass` although more passes were due, because the restore
    /// that should have followed failed without writing anything: device memory is as that pass
    /// left it (one execution). `stats->declined_reason` says why. No later PASS event follows.
    KREPLAY_EVENT_LOOP_STOPPED = 5,
}

/// Where attached packets go relative to the replayed dispatch (a `uint32_t` in C: a value
/// other than these is refused with `KREPLAY_STATUS_INVALID_ARGUMENT`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum kreplay_packet_position_t {
    /// Submitted before the dispatch of this pass and each following pass of the loop.
    KREPLAY_PACKET_BEFORE = 0,
    /// Submitted after the dispatch of this pass and each following pass of the loop.
    KREPLAY_PACKET_AFTER = 1,
    /// Submitted before the dispatch of this pass only (after the loop's `KREPLAY_PACKET_BEFORE`
    /// packets, so nearest the dispatch); the dispatch then gets its barrier bit.
    KREPLAY_PACKET_BEFORE_PASS = 2,
    /// Submitted after the dispatch of this pass only (before the loop's `KREPLAY_PACKET_AFTER`
    /// packets, so nearest the dispatch).
    KREPLAY_PACKET_AFTER_PASS = 3,
}

impl kreplay_packet_position_t {
    /// The position with value `v`, if there is one.
    pub fn from_u32(v: u32) -> Option<Self> {
        match v {
            0 => Some(Self::KREPLAY_PACKET_BEFORE),
            1 => Some(Self::KREPLAY_PACKET_AFTER),
            2 => Some(Self::KREPLAY_PACKET_BEFORE_PASS),
            3 => Some(Self::KREPLAY_PACKET_AFTER_PASS),
            _ => None,
        }
    }
}

/// Bits of `kreplay_callbacks_t.flags` (a `uint64_t` in the struct: a bit other than these is
/// refused by `kreplay_register` with `KREPLAY_STATUS_INVALID_ARGUMENT`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum kreplay_client_flag_t {
    /// A dispatch that runs once (pass count 1, or a declined replay) still gets PASS ENTER and
    /// PASS EXIT for pass 0, in a window without a snapshot: the agent's writer lock is held and
    /// earlier work drained, so packets attached in PASS ENTER see this dispatch alone (how
    /// counters are collected on a dispatch that needs one pass).
    KREPLAY_CLIENT_PASS_EVENTS_ALWAYS = 1,
}

impl kreplay_client_flag_t {
    /// Every flag bit this version knows.
    pub const KNOWN: u64 = Self::KREPLAY_CLIENT_PASS_EVENTS_ALWAYS as u64;
}

/// A dispatch as seen by callbacks. Owned by the tool; valid during the callback only.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct kreplay_dispatch_info_t {
    /// `sizeof(kreplay_dispatch_info_t)` as the tool built it.
    pub size: u64,
    /// `hsa_agent_t.handle` of the queue's agent.
    pub agent_handle: u64,
    /// The application's `hsa_queue_t*`.
    pub queue: *const c_void,
    /// The queue's `id`.
    pub queue_id: u64,
    /// One id for every pass of this dispatch (from 1, per process).
    pub dispatch_id: u64,
    /// Kernel object of the dispatch packet.
    pub kernel_object: u64,
    /// Kernel symbol name, NUL-terminated; NULL when the loader does not know it.
    pub kernel_name: *const c_char,
    /// Grid size x, y, z (work-items).
    pub grid_size: [u32; 3],
    /// Work-group size x, y, z.
    pub workgroup_size: [u16; 3],
    /// Reserved, 0.
    pub reserved0: u16,
    /// Private segment size per work-item (bytes).
    pub private_segment_size: u32,
    /// Group segment size per work-group (bytes).
    pub group_segment_size: u32,
    /// Kernel-argument address.
    pub kernarg_address: *const c_void,
}

/// Snapshot/restore statistics of one dispatch, so far.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct kreplay_replay_stats_t {
    /// `sizeof(kreplay_replay_stats_t)` as the tool built it.
    pub size: u64,
    /// Regions captured.
    pub snapshot_regions: u64,
    /// Bytes captured.
    pub snapshot_bytes: u64,
    /// Capture time (ns).
    pub snapshot_ns: u64,
    /// Restores run so far.
    pub restore_count: u64,
    /// Regions written back, summed over restores.
    pub restored_regions: u64,
    /// Bytes written back, summed over restores.
    pub restored_bytes: u64,
    /// Regions skipped (freed or shrunk), summed over restores.
    pub skipped_regions: u64,
    /// Restore time (ns), summed.
    pub restore_ns: u64,
    /// Why replay was declined, NUL-terminated; NULL when it was not.
    pub declined_reason: *const c_char,
}

/// One replay event. Owned by the tool; valid during the callback only.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct kreplay_event_t {
    /// `sizeof(kreplay_event_t)` as the tool built it.
    pub size: u64,
    /// What happened.
    pub kind: kreplay_event_kind_t,
    /// Pass index, from 0 (PASS events).
    pub pass: u32,
    /// Passes requested; 0 for an unbounded loop.
    pub total_passes: u32,
    /// Reserved, 0.
    pub reserved0: u32,
    /// The dispatch; never NULL.
    pub dispatch: *const kreplay_dispatch_info_t,
    /// PASS EXIT: the kernel's start on the device (host CLOCK_MONOTONIC ns).
    pub pass_start_ns: u64,
    /// PASS EXIT: the kernel's end on the device (host CLOCK_MONOTONIC ns).
    pub pass_end_ns: u64,
    /// CONFIG EXIT and PASS EXIT: statistics of the dispatch; NULL otherwise.
    pub stats: *const kreplay_replay_stats_t,
}

/// Pass-count callback: 0 = unbounded (needs `should_continue`), 1 = no replay, N = N passes.
pub type kreplay_pass_count_fn = Option<
    unsafe extern "C" fn(dispatch: *const kreplay_dispatch_info_t, user_data: *mut c_void) -> u32,
>;
/// Continue callback: nonzero continues. Called after each PASS EXIT except after the last
/// pass of a fixed loop. `total_passes` is 0 for an unbounded loop.
pub type kreplay_continue_fn = Option<
    unsafe extern "C" fn(
        dispatch: *const kreplay_dispatch_info_t,
        current_pass: u32,
        total_passes: u32,
        user_data: *mut c_void,
    ) -> i32,
>;
/// Event callback.
pub type kreplay_event_fn =
    Option<unsafe extern "C" fn(event: *const kreplay_event_t, user_data: *mut c_void)>;

/// The callbacks of a client. Copied by `kreplay_register`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct kreplay_callbacks_t {
    /// `sizeof(kreplay_callbacks_t)`.
    pub size: u64,
    /// May be NULL: every dispatch runs once.
    pub pass_count: kreplay_pass_count_fn,
    /// May be NULL: fixed loops run all passes; unbounded loops are declined.
    pub should_continue: kreplay_continue_fn,
    /// May be NULL.
    pub on_event: kreplay_event_fn,
    /// Passed to every callback; may be NULL. Must stay valid for the life of the process.
    pub user_data: *mut c_void,
    /// Bits of `kreplay_client_flag_t`; 0 for none. Read only when `size` covers it (a struct
    /// of an older header, without this field, means 0).
    pub flags: u64,
}

/// Bytes of the first `kreplay_callbacks_t` (without `flags`): the least `size` accepted.
pub const CALLBACKS_SIZE_V1: usize = std::mem::offset_of!(kreplay_callbacks_t, flags);

/// Process totals.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct kreplay_stats_t {
    /// Caller sets `sizeof(kreplay_stats_t)`.
    pub size: u64,
    /// Dispatches a client was asked about.
    pub dispatches: u64,
    /// Dispatches that ran more than one pass.
    pub replayed_dispatches: u64,
    /// Passes run by replayed dispatches.
    pub passes: u64,
    /// Dispatches whose replay was declined (incomplete snapshot, bad pass count).
    pub declined: u64,
    /// Always 0: multi-packet submissions are replayed dispatch by dispatch (kept for the
    /// layout; it counted batches that ran once).
    pub batches_run_once: u64,
    /// Bytes captured by snapshots.
    pub snapshot_bytes: u64,
    /// Bytes written back by restores.
    pub restored_bytes: u64,
    /// Regions skipped by restores.
    pub skipped_regions: u64,
}

/// What a replay does with host and fine-grained memory its dispatch can reach (a `uint32_t`
/// in C: a value other than these is refused with `KREPLAY_STATUS_INVALID_ARGUMENT`). The
/// values match `KREPLAY_HOST_MEMORY`'s words.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum kreplay_host_memory_policy_t {
    /// `snapshot`: captured and restored between passes when that is safe, else declined (the
    /// default).
    KREPLAY_HOST_MEMORY_SNAPSHOT = 0,
    /// `decline`: every dispatch that can reach such memory runs once, normally.
    KREPLAY_HOST_MEMORY_DECLINE = 1,
    /// `ignore`: replayed without restoring it (every pass writes it again); warned about in
    /// the outputs.
    KREPLAY_HOST_MEMORY_IGNORE = 2,
}

impl kreplay_host_memory_policy_t {
    /// The policy with value `v`, if there is one.
    pub fn from_u32(v: u32) -> Option<Self> {
        match v {
            0 => Some(Self::KREPLAY_HOST_MEMORY_SNAPSHOT),
            1 => Some(Self::KREPLAY_HOST_MEMORY_DECLINE),
            2 => Some(Self::KREPLAY_HOST_MEMORY_IGNORE),
            _ => None,
        }
    }
}

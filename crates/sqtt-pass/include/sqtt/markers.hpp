// SQTT markers for HIP device code.
//
//   sqtt_marker_enter("name") / sqtt_marker_exit("name") / sqtt_marker_point("name")
//   sqtt_marker_data("name", value)
//       Named markers. The libsqttinstrumentpass.so pass plugin replaces them with
//       s_ttracedata instructions and records the names in the .sqtt_funcmap section.
//       Without the plugin the link fails with an undefined reference to
//       __sqtt_named_marker_enter (or _exit/_point/_data): never a silent miscompilation.
//
//   sqtt_marker_enter(id) / sqtt_marker_exit(id) / sqtt_marker_point(id)
//       Numeric markers; work without the plugin. The word is (id << 2) | flags:
//       bit 0 exit previous scope, bit 1 enter. Exit always emits 1 (pop the top scope).
//
// Compile with -DSQTT_ENABLED=1 to enable. With SQTT_ENABLED=0 (the default) every call
// compiles to nothing, so markers can stay in production code.
//
// Device code only; include after the definitions of __device__ (HIP headers or your own).

#ifndef SQTT_MARKERS_HPP
#define SQTT_MARKERS_HPP

#ifndef SQTT_ENABLED
#define SQTT_ENABLED 0
#endif

#ifndef __device__
#define __device__ __attribute__((device))
#endif

#if SQTT_ENABLED

// Resolved by the pass plugin. Declared with the symbol names __sqtt_named_marker_* so the
// plugin finds the calls before any inlining, and a missing plugin is a link error.
__device__ void sqtt_marker_enter(const char *name) __asm__("__sqtt_named_marker_enter");
__device__ void sqtt_marker_exit(const char *name) __asm__("__sqtt_named_marker_exit");
__device__ void sqtt_marker_point(const char *name) __asm__("__sqtt_named_marker_point");
__device__ void sqtt_marker_data(const char *name, unsigned int value) __asm__("__sqtt_named_marker_data");

// Numeric markers. sched_barrier(0) keeps the scheduler from moving code across them; the
// plugin, when loaded, adds the SQTT_MEM_BARRIER boundary on top.
__device__ static inline __attribute__((always_inline)) void sqtt_marker_word_(unsigned int word) {
    __builtin_amdgcn_sched_barrier(0);
    __builtin_amdgcn_s_ttracedata((int)word);
    __builtin_amdgcn_sched_barrier(0);
}
// Any integer or enum type selects the numeric form; string literals the named form.
template <bool Enable> struct sqtt_numeric_id_ {};
template <> struct sqtt_numeric_id_<true> { typedef void type; };
#define SQTT_NUMERIC_(T) typename sqtt_numeric_id_<__is_integral(T) || __is_enum(T)>::type

template <typename T>
__device__ static inline __attribute__((always_inline)) SQTT_NUMERIC_(T) sqtt_marker_enter(T id) {
    sqtt_marker_word_(((unsigned int)id << 2) | 2u);
}
template <typename T>
__device__ static inline __attribute__((always_inline)) SQTT_NUMERIC_(T) sqtt_marker_exit(T) {
    sqtt_marker_word_(1u);
}
template <typename T>
__device__ static inline __attribute__((always_inline)) SQTT_NUMERIC_(T) sqtt_marker_point(T id) {
    sqtt_marker_word_((unsigned int)id << 2);
}

#else // !SQTT_ENABLED

__device__ static inline __attribute__((always_inline)) void sqtt_marker_enter(const char *) {}
__device__ static inline __attribute__((always_inline)) void sqtt_marker_exit(const char *) {}
__device__ static inline __attribute__((always_inline)) void sqtt_marker_point(const char *) {}
__device__ static inline __attribute__((always_inline)) void sqtt_marker_data(const char *, unsigned int) {}
template <typename T> __device__ static inline __attribute__((always_inline)) void sqtt_marker_enter(T) {}
template <typename T> __device__ static inline __attribute__((always_inline)) void sqtt_marker_exit(T) {}
template <typename T> __device__ static inline __attribute__((always_inline)) void sqtt_marker_point(T) {}

#endif // SQTT_ENABLED

#endif // SQTT_MARKERS_HPP

/* End-to-end check of the virtual runtime through the plain HSA C API.
 *
 * usage: e2e <code-object>
 *
 * The code object (built from tests/device/counter.hip) holds the kernel `increment` and the
 * `__device__` variable `counter` (initial value 7). A native implementation of `increment`
 * is registered through vhsa.h; it adds 1 to each of the first n elements and increments
 * `counter` once per dispatch through the variable's device address.
 *
 * Every result is checked; the first mismatch prints what differed and exits with status 1. */
#define _POSIX_C_SOURCE 200809L

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ven_amd_loader.h>

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aql_submit.h"
#include "vhsa.h"

#define N 256

#define CHECK(cond, ...)                                               \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "e2e: %s:%d: check failed: %s: ", __FILE__,     \
              __LINE__, #cond);                                        \
      fprintf(stderr, __VA_ARGS__);                                    \
      fprintf(stderr, "\n");                                           \
      exit(1);                                                         \
    }                                                                  \
  } while (0)

#define CHECK_OK(call)                                                 \
  do {                                                                 \
    hsa_status_t st_ = (call);                                         \
    if (st_ != HSA_STATUS_SUCCESS) {                                   \
      const char* msg_ = NULL;                                         \
      hsa_status_string(st_, &msg_);                                   \
      fprintf(stderr, "e2e: %s:%d: %s returned %#x (%s)\n", __FILE__,  \
              __LINE__, #call, (unsigned)st_, msg_ ? msg_ : "?");      \
      exit(1);                                                         \
    }                                                                  \
  } while (0)

struct agents {
  hsa_agent_t cpu, gpu;
  int cpus, gpus;
};

static hsa_status_t collect_agent(hsa_agent_t agent, void* data) {
  struct agents* a = data;
  hsa_device_type_t type;
  CHECK_OK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
  if (type == HSA_DEVICE_TYPE_CPU) {
    if (a->cpus++ == 0) a->cpu = agent;
  } else if (type == HSA_DEVICE_TYPE_GPU) {
    if (a->gpus++ == 0) a->gpu = agent;
  }
  return HSA_STATUS_SUCCESS;
}

struct pools {
  hsa_amd_memory_pool_t coarse, fine, kernarg;
  int have_coarse, have_fine, have_kernarg;
};

static hsa_status_t collect_pool(hsa_amd_memory_pool_t pool, void* data) {
  struct pools* p = data;
  hsa_amd_segment_t segment;
  CHECK_OK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
  if (segment != HSA_AMD_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  uint32_t flags = 0;
  CHECK_OK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  bool alloc_ok = false;
  CHECK_OK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc_ok));
  if (!alloc_ok) return HSA_STATUS_SUCCESS;
  if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) && !p->have_kernarg) {
    p->kernarg = pool;
    p->have_kernarg = 1;
  } else if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) && !p->have_coarse) {
    p->coarse = pool;
    p->have_coarse = 1;
  } else if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) && !p->have_fine) {
    p->fine = pool;
    p->have_fine = 1;
  }
  return HSA_STATUS_SUCCESS;
}

/* State of the native `increment` kernel: where `counter` lives. */
struct increment_state {
  uint32_t* counter;
  uint64_t calls;
};

struct increment_args {
  uint32_t* data;
  uint32_t n;
};

static void increment_native(const hsa_kernel_dispatch_packet_t* packet, void* user_data) {
  struct increment_state* state = user_data;
  const struct increment_args* args = packet->kernarg_address;
  for (uint32_t i = 0; i < packet->grid_size_x; i++) {
    if (i < args->n) args->data[i] += 1;
  }
  if (state->counter) __atomic_fetch_add(state->counter, 1, __ATOMIC_RELAXED);
  state->calls++;
}

struct symbol_count {
  int kernels, variables;
  int saw_increment, saw_counter;
};

static hsa_status_t count_symbol(hsa_executable_t exec, hsa_agent_t agent, hsa_executable_symbol_t sym,
                                 void* data) {
  (void)exec;
  (void)agent;
  struct symbol_count* c = data;
  hsa_symbol_kind_t kind;
  CHECK_OK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind));
  uint32_t len = 0;
  CHECK_OK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &len));
  char name[256] = {0};
  CHECK(len < sizeof name, "symbol name length %u", len);
  CHECK_OK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name));
  if (kind == HSA_SYMBOL_KIND_KERNEL) {
    c->kernels++;
    if (strcmp(name, "increment.kd") == 0) c->saw_increment = 1;
  } else if (kind == HSA_SYMBOL_KIND_VARIABLE) {
    c->variables++;
    if (strcmp(name, "counter") == 0) c->saw_counter = 1;
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_executable(hsa_executable_t exec, void* data) {
  hsa_executable_t* wanted = data;
  if (exec.handle == wanted->handle) {
    wanted->handle = 0; /* found */
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static void wait_zero(hsa_signal_t s, const char* what) {
  /* Bounded: 10 s in 100 ms steps. */
  for (int i = 0; i < 100; i++) {
    if (hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, 100000000ull, HSA_WAIT_STATE_BLOCKED) == 0)
      return;
  }
  fprintf(stderr, "e2e: timed out waiting for %s\n", what);
  exit(1);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <code-object>\n", argv[0]);
    return 2;
  }

  /* Native kernel registered before hsa_init (allowed by the contract). */
  static struct increment_state state = {0};
  uint64_t native_object = vhsa_native_kernel_create("increment", increment_native, &state);
  CHECK(native_object != 0, "vhsa_native_kernel_create returned 0");
  CHECK(vhsa_native_kernel_create(NULL, increment_native, NULL) == 0, "NULL name must fail");

  CHECK_OK(hsa_init());
  vhsa_stats_reset();

  /* Agents. */
  struct agents agents = {0};
  CHECK_OK(hsa_iterate_agents(collect_agent, &agents));
  CHECK(agents.cpus >= 1 && agents.gpus >= 1, "cpus=%d gpus=%d", agents.cpus, agents.gpus);
  char name[64] = {0};
  CHECK_OK(hsa_agent_get_info(agents.gpu, HSA_AGENT_INFO_NAME, name));
  CHECK(strcmp(name, "gfx942") == 0, "gpu name %s", name);

  /* Pools. */
  struct pools gpu_pools = {0}, cpu_pools = {0};
  CHECK_OK(hsa_amd_agent_iterate_memory_pools(agents.gpu, collect_pool, &gpu_pools));
  CHECK_OK(hsa_amd_agent_iterate_memory_pools(agents.cpu, collect_pool, &cpu_pools));
  CHECK(gpu_pools.have_coarse, "no coarse-grained pool on the GPU agent");
  CHECK(cpu_pools.have_kernarg, "no kernarg pool on the CPU agent");
  hsa_amd_memory_pool_t host_pool = cpu_pools.have_fine ? cpu_pools.fine : cpu_pools.kernarg;

  /* Allocations. */
  const size_t bytes = N * sizeof(uint32_t);
  uint32_t* dev = NULL;
  uint32_t* host = NULL;
  CHECK_OK(hsa_amd_memory_pool_allocate(gpu_pools.coarse, bytes, 0, (void**)&dev));
  CHECK_OK(hsa_amd_memory_pool_allocate(host_pool, bytes, 0, (void**)&host));
  CHECK(dev && host, "allocation returned NULL");
  hsa_agent_t both[2] = {agents.cpu, agents.gpu};
  CHECK_OK(hsa_amd_agents_allow_access(2, both, NULL, dev));
  CHECK_OK(hsa_amd_agents_allow_access(2, both, NULL, host));

  /* Pointer info. */
  hsa_amd_pointer_info_t info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  CHECK_OK(hsa_amd_pointer_info((char*)dev + 16, &info, NULL, NULL, NULL));
  CHECK(info.type == HSA_EXT_POINTER_TYPE_HSA, "pointer type %d", (int)info.type);
  CHECK(info.agentBaseAddress == dev, "agent base %p != %p", info.agentBaseAddress, (void*)dev);
  CHECK(info.sizeInBytes == bytes, "size %zu", info.sizeInBytes);
  CHECK(info.agentOwner.handle == agents.gpu.handle, "owner is not the GPU agent");

  /* Synchronous copies. */
  for (uint32_t i = 0; i < N; i++) host[i] = i * 3;
  CHECK_OK(hsa_memory_copy(dev, host, bytes));
  memset(host, 0, bytes);
  CHECK_OK(hsa_memory_copy(host, dev, bytes));
  for (uint32_t i = 0; i < N; i++) CHECK(host[i] == i * 3, "sync copy: host[%u] = %u", i, host[i]);

  /* Signals. */
  hsa_signal_t sig;
  CHECK_OK(hsa_signal_create(5, 0, NULL, &sig));
  CHECK(hsa_signal_load_scacquire(sig) == 5, "signal initial value");
  hsa_signal_subtract_screlease(sig, 2);
  CHECK(hsa_signal_load_relaxed(sig) == 3, "signal after subtract");
  hsa_signal_store_screlease(sig, 1);

  /* Asynchronous copy: device -> host into a second buffer. */
  uint32_t* host2 = NULL;
  CHECK_OK(hsa_amd_memory_pool_allocate(host_pool, bytes, 0, (void**)&host2));
  CHECK_OK(hsa_amd_agents_allow_access(2, both, NULL, host2));
  CHECK_OK(hsa_amd_memory_async_copy(host2, agents.cpu, dev, agents.gpu, bytes, 0, NULL, sig));
  wait_zero(sig, "async copy completion");
  for (uint32_t i = 0; i < N; i++) CHECK(host2[i] == i * 3, "async copy: host2[%u] = %u", i, host2[i]);

  /* Code object from clang. */
  int fd = open(argv[1], O_RDONLY);
  CHECK(fd >= 0, "cannot open %s", argv[1]);
  hsa_code_object_reader_t reader;
  CHECK_OK(hsa_code_object_reader_create_from_file(fd, &reader));
  hsa_executable_t exec;
  CHECK_OK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exec));
  hsa_loaded_code_object_t loaded;
  CHECK_OK(hsa_executable_load_agent_code_object(exec, agents.gpu, reader, NULL, &loaded));
  CHECK_OK(hsa_executable_freeze(exec, NULL));
  uint32_t valid = 1;
  CHECK_OK(hsa_executable_validate(exec, &valid));
  CHECK(valid == 0, "executable validation result %u", valid);
  close(fd);

  hsa_executable_symbol_t kernel_sym, counter_sym;
  CHECK_OK(hsa_executable_get_symbol_by_name(exec, "increment.kd", &agents.gpu, &kernel_sym));
  CHECK_OK(hsa_executable_get_symbol_by_name(exec, "counter", &agents.gpu, &counter_sym));
  CHECK(hsa_executable_get_symbol_by_name(exec, "missing", &agents.gpu, &counter_sym) ==
            HSA_STATUS_ERROR_INVALID_SYMBOL_NAME,
        "unknown symbol must fail");
  CHECK_OK(hsa_executable_get_symbol_by_name(exec, "counter", &agents.gpu, &counter_sym));

  uint64_t kernel_object = 0;
  uint32_t kernarg_size = 0, group_size = 0;
  CHECK_OK(hsa_executable_symbol_get_info(kernel_sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &kernel_object));
  CHECK_OK(hsa_executable_symbol_get_info(kernel_sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                          &kernarg_size));
  CHECK_OK(hsa_executable_symbol_get_info(kernel_sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                                          &group_size));
  CHECK(kernel_object != 0, "kernel object is 0");
  /* The kernel arguments end after `n`: no tail padding in the kernarg segment size. */
  CHECK(kernarg_size == offsetof(struct increment_args, n) + sizeof(uint32_t), "kernarg size %u", kernarg_size);
  CHECK(group_size == 64 * sizeof(uint32_t), "group segment size %u", group_size);

  uint64_t counter_addr = 0;
  uint32_t counter_size = 0;
  hsa_symbol_kind_t kind;
  CHECK_OK(hsa_executable_symbol_get_info(counter_sym, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind));
  CHECK(kind == HSA_SYMBOL_KIND_VARIABLE, "counter kind %d", (int)kind);
  CHECK_OK(hsa_executable_symbol_get_info(counter_sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &counter_addr));
  CHECK_OK(hsa_executable_symbol_get_info(counter_sym, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE, &counter_size));
  CHECK(counter_addr != 0 && counter_size == sizeof(uint32_t), "counter at %#llx size %u",
        (unsigned long long)counter_addr, counter_size);
  uint32_t counter_value = 0;
  CHECK_OK(hsa_memory_copy(&counter_value, (void*)(uintptr_t)counter_addr, sizeof counter_value));
  CHECK(counter_value == 7, "counter initial value %u (the ELF's .data holds 7)", counter_value);
  state.counter = (uint32_t*)(uintptr_t)counter_addr;

  /* Symbols for the GPU agent: two kernels, the variables; nothing for the CPU agent. */
  struct symbol_count gpu_syms = {0}, cpu_syms = {0};
  CHECK_OK(hsa_executable_iterate_agent_symbols(exec, agents.gpu, count_symbol, &gpu_syms));
  CHECK_OK(hsa_executable_iterate_agent_symbols(exec, agents.cpu, count_symbol, &cpu_syms));
  CHECK(gpu_syms.kernels == 2 && gpu_syms.saw_increment, "kernels on gpu: %d", gpu_syms.kernels);
  CHECK(gpu_syms.saw_counter && gpu_syms.variables >= 1, "variables on gpu: %d", gpu_syms.variables);
  CHECK(cpu_syms.kernels == 0 && cpu_syms.variables == 0, "cpu agent sees %d symbols",
        cpu_syms.kernels + cpu_syms.variables);

  /* Loader extension: the executable is listed, and the variable's address maps back to it. */
  hsa_ven_amd_loader_1_01_pfn_t loader;
  memset(&loader, 0, sizeof loader);
  CHECK_OK(hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, sizeof loader, &loader));
  CHECK(loader.hsa_ven_amd_loader_query_executable != NULL, "loader table not filled");
  hsa_executable_t owner = {0};
  CHECK_OK(loader.hsa_ven_amd_loader_query_executable((void*)(uintptr_t)counter_addr, &owner));
  CHECK(owner.handle == exec.handle, "query_executable gave another executable");
  const void* host_addr = NULL;
  CHECK_OK(loader.hsa_ven_amd_loader_query_host_address((void*)(uintptr_t)counter_addr, &host_addr));
  CHECK(*(const uint32_t*)host_addr == 7, "host view of counter %u", *(const uint32_t*)host_addr);
  hsa_ven_amd_loader_1_03_pfn_t loader3;
  memset(&loader3, 0, sizeof loader3);
  CHECK_OK(hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, sizeof loader3, &loader3));
  hsa_executable_t wanted = exec;
  hsa_status_t it = loader3.hsa_ven_amd_loader_iterate_executables(find_executable, &wanted);
  CHECK(it == HSA_STATUS_INFO_BREAK && wanted.handle == 0, "iterate_executables did not report ours");

  /* Queue, dispatch and barrier. */
  hsa_queue_t* queue = NULL;
  CHECK_OK(hsa_queue_create(agents.gpu, 64, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue));
  struct increment_args* kernarg = NULL;
  CHECK_OK(hsa_amd_memory_pool_allocate(cpu_pools.kernarg, sizeof *kernarg, 0, (void**)&kernarg));
  CHECK_OK(hsa_amd_agents_allow_access(1, &agents.gpu, NULL, kernarg));
  kernarg->data = dev;
  kernarg->n = N - 6; /* the last 6 elements stay untouched */

  hsa_signal_t done;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &done));
  hsa_kernel_dispatch_packet_t pkt = aql_dispatch_packet(kernel_object, kernarg, N, 64, done);
  pkt.header = aql_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, 1);
  pkt.group_segment_size = group_size;
  aql_submit(queue, &pkt);
  wait_zero(done, "kernel dispatch completion");

  hsa_signal_t barrier_done;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &barrier_done));
  hsa_barrier_and_packet_t bar = aql_barrier_and_packet(done /* already 0: satisfied */, barrier_done);
  aql_submit(queue, &bar);
  wait_zero(barrier_done, "barrier completion");

  /* Results: data incremented where i < n, counter 7 -> 8. */
  CHECK(state.calls == 1, "native kernel ran %llu times", (unsigned long long)state.calls);
  CHECK_OK(hsa_memory_copy(host, dev, bytes));
  for (uint32_t i = 0; i < N; i++) {
    uint32_t want = i * 3 + (i < N - 6 ? 1 : 0);
    CHECK(host[i] == want, "after dispatch: data[%u] = %u, want %u", i, host[i], want);
  }
  CHECK_OK(hsa_memory_copy(&counter_value, (void*)(uintptr_t)counter_addr, sizeof counter_value));
  CHECK(counter_value == 8, "counter after dispatch %u, want 8", counter_value);

  /* Counters. */
  vhsa_stats_t stats;
  memset(&stats, 0, sizeof stats);
  stats.size = sizeof stats;
  CHECK_OK(vhsa_stats(&stats));
  CHECK(stats.dispatches == 1, "stats.dispatches %llu", (unsigned long long)stats.dispatches);
  CHECK(stats.barrier_packets == 1, "stats.barrier_packets %llu", (unsigned long long)stats.barrier_packets);
  CHECK(stats.copies >= 4, "stats.copies %llu", (unsigned long long)stats.copies);
  CHECK(stats.bytes_host_to_device >= bytes, "stats.bytes_host_to_device %llu",
        (unsigned long long)stats.bytes_host_to_device);
  CHECK(stats.bytes_device_to_host >= 2 * bytes, "stats.bytes_device_to_host %llu",
        (unsigned long long)stats.bytes_device_to_host);

  /* Teardown. */
  CHECK_OK(hsa_queue_destroy(queue));
  CHECK_OK(hsa_executable_destroy(exec));
  CHECK_OK(hsa_code_object_reader_destroy(reader));
  CHECK_OK(hsa_signal_destroy(done));
  CHECK_OK(hsa_signal_destroy(barrier_done));
  CHECK_OK(hsa_signal_destroy(sig));
  CHECK_OK(hsa_amd_memory_pool_free(kernarg));
  CHECK_OK(hsa_amd_memory_pool_free(host2));
  CHECK_OK(hsa_amd_memory_pool_free(host));
  CHECK_OK(hsa_amd_memory_pool_free(dev));
  CHECK_OK(hsa_shut_down());

  printf("e2e: all checks passed\n");
  return 0;
}

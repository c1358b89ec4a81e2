/* A tool library for the tool-loading tests. Built several times with different macros:
 *   TOOL_NAME      name printed in every line;
 *   TOOL_ACCEPT    value OnLoad returns (1 accept, 0 refuse);
 *   TOOL_PRIORITY  when defined, exported as HSA_AMD_TOOL_PRIORITY (a preloaded tool);
 *   TOOL_REENTER   when defined, OnLoad calls hsa_init and reports the result.
 * It wraps hsa_queue_create (core table member 8, byte offset 72) and prints each call. */
#include <hsa/hsa.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifndef TOOL_NAME
#define TOOL_NAME "tool"
#endif
#ifndef TOOL_ACCEPT
#define TOOL_ACCEPT 1
#endif

#ifdef TOOL_PRIORITY
const uint32_t HSA_AMD_TOOL_PRIORITY = TOOL_PRIORITY;
#endif

typedef struct {
  uint32_t major_id, minor_id, step_id, reserved;
} table_version_t;

typedef struct {
  table_version_t version;
  void* core;
  void* amd_ext;
  void* finalizer;
  void* image;
  void* tools;
  void* pc_sampling;
} root_table_t;

typedef hsa_status_t (*queue_create_fn)(hsa_agent_t, uint32_t, hsa_queue_type32_t,
                                        void (*)(hsa_status_t, hsa_queue_t*, void*), void*, uint32_t,
                                        uint32_t, hsa_queue_t**);

static queue_create_fn original_queue_create;

static hsa_status_t wrapped_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                                         void (*cb)(hsa_status_t, hsa_queue_t*, void*), void* data,
                                         uint32_t priv, uint32_t group, hsa_queue_t** queue) {
  printf("%s: hsa_queue_create size=%u\n", TOOL_NAME, size);
  fflush(stdout);
  return original_queue_create(agent, size, type, cb, data, priv, group, queue);
}

static hsa_status_t count_agent(hsa_agent_t agent, void* data) {
  (void)agent;
  (*(int*)data)++;
  return HSA_STATUS_SUCCESS;
}

bool OnLoad(void* table, uint64_t runtime_version, uint64_t failed_tool_count, const char* const* failed_tool_names) {
  root_table_t* root = (root_table_t*)table;
  table_version_t* core = (table_version_t*)root->core;
  table_version_t* amd = (table_version_t*)root->amd_ext;
  printf("%s: OnLoad runtime_version=%llu root_major=%u core_major=%u core_size=%u amd_major=%u failed=%llu",
         TOOL_NAME, (unsigned long long)runtime_version, root->version.major_id, core->major_id, core->minor_id,
         amd->major_id, (unsigned long long)failed_tool_count);
  for (uint64_t i = 0; i < failed_tool_count; i++) printf(" [%s]", failed_tool_names[i]);
  printf("\n");
#ifdef TOOL_REENTER
  hsa_status_t s = hsa_init();
  printf("%s: hsa_init from OnLoad -> 0x%x\n", TOOL_NAME, (unsigned)s);
  int agents = 0;
  s = hsa_iterate_agents(count_agent, &agents);
  printf("%s: hsa_iterate_agents from OnLoad -> 0x%x agents=%d\n", TOOL_NAME, (unsigned)s, agents);
#else
  (void)count_agent;
#endif
  fflush(stdout);
  if (!TOOL_ACCEPT) return false;
  void** slots = (void**)root->core;
  original_queue_create = (queue_create_fn)slots[72 / 8];
  slots[72 / 8] = (void*)wrapped_queue_create;
  return true;
}

void OnUnload(void) {
  printf("%s: OnUnload\n", TOOL_NAME);
  fflush(stdout);
}

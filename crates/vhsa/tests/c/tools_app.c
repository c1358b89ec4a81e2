/* An application for the tool-loading tests: init, create and destroy one queue, shut down. */
#include "vhsa_test.h"

int main(void) {
  CHECK_OK(hsa_init());
  test_agents_t ag = test_agents();
  hsa_queue_t* q = NULL;
  CHECK_OK(hsa_queue_create(ag.gpus[0], 128, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q));
  printf("app: queue created\n");
  fflush(stdout);
  CHECK_OK(hsa_queue_destroy(q));
  CHECK_OK(hsa_shut_down());
  /* The last shutdown reset the table: tool wrappers no longer run. */
  CHECK_STATUS(hsa_queue_create(ag.gpus[0], 128, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q),
               HSA_STATUS_ERROR_NOT_INITIALIZED);
  printf("app: done\n");
  return 0;
}

/* hsa_amd_memory_async_copy_rect (used by hipMemcpy2D) with ROCR's argument checks, and the
 * image extension's entries on an agent without images (tests/image_extension.rs covers a
 * gfx90a agent, which has them). */
#include <hsa/hsa_ext_image.h>

#include "vhsa_test.h"

int main(void) {
  CHECK_OK(hsa_init());
  test_agents_t ag = test_agents();
  hsa_agent_t gpu = ag.gpus[0];
  hsa_amd_memory_pool_t dev_pool = test_pool(gpu, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);

  /* A 3D box: 5 bytes x 3 rows x 2 slices, from host memory (pitch 16, slice 64) at offset
   * (1, 1, 0) into device memory (pitch 32, slice 128) at offset (2, 0, 1). */
  uint8_t host[256], back[512];
  for (int i = 0; i < 256; i++) host[i] = (uint8_t)(i + 1);
  uint8_t* dev = NULL;
  CHECK_OK(hsa_amd_memory_pool_allocate(dev_pool, 512, 0, (void**)&dev));
  memset(back, 0, sizeof back);
  hsa_signal_t done;
  CHECK_OK(hsa_signal_create(1, 0, NULL, &done));
  hsa_pitched_ptr_t src = {host, 16, 64}, dst = {dev, 32, 128};
  hsa_dim3_t src_off = {1, 1, 0}, dst_off = {2, 0, 1}, range = {5, 3, 2};
  CHECK_OK(hsa_memory_copy(dev, back, 512));
  CHECK_OK(hsa_amd_memory_async_copy_rect(&dst, &dst_off, &src, &src_off, &range, gpu, hsaHostToDevice, 0, NULL, done));
  test_wait_eq(done, 0, "the rect copy");
  CHECK_OK(hsa_memory_copy(back, dev, 512));
  for (int z = 0; z < 4; z++)
    for (int y = 0; y < 4; y++)
      for (int x = 0; x < 32; x++) {
        int inside = z >= 1 && z < 3 && y < 3 && x >= 2 && x < 7;
        uint8_t want = inside ? host[(z - 1) * 64 + (y + 1) * 16 + (x - 2 + 1)] : 0;
        CHECK(back[z * 128 + y * 32 + x] == want);
      }

  /* Checks in ROCR's order. */
  hsa_signal_store_relaxed(done, 1);
  CHECK_STATUS(hsa_amd_memory_async_copy_rect(NULL, &dst_off, &src, &src_off, &range, gpu, hsaHostToDevice, 0, NULL, done),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_memory_async_copy_rect(&dst, &dst_off, &src, &src_off, NULL, gpu, hsaHostToDevice, 0, NULL, done),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_memory_async_copy_rect(&dst, &dst_off, &src, &src_off, &range, gpu, hsaHostToDevice, 1, NULL, done),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_memory_async_copy_rect(&dst, &dst_off, &src, &src_off, &range, gpu, hsaHostToHost, 0, NULL, done),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_amd_memory_async_copy_rect(&dst, &dst_off, &src, &src_off, &range, ag.cpu, hsaHostToDevice, 0, NULL, done),
               HSA_STATUS_ERROR_INVALID_AGENT);
  hsa_signal_t bogus = {0x1234};
  CHECK_STATUS(hsa_amd_memory_async_copy_rect(&dst, &dst_off, &src, &src_off, &range, gpu, hsaHostToDevice, 0, NULL, bogus),
               HSA_STATUS_ERROR_INVALID_SIGNAL);
  hsa_dim3_t too_wide = {20, 1, 1};
  CHECK_STATUS(hsa_amd_memory_async_copy_rect(&dst, &dst_off, &src, &src_off, &too_wide, gpu, hsaHostToDevice, 0, NULL, done),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK(hsa_signal_load_relaxed(done) == 1);

  /* The image extension on an agent without images (the default gfx942): not in its
   * extensions, capability 0, images refused with FORMAT_UNSUPPORTED, samplers with
   * INVALID_AGENT; the argument checks come first, as in ROCR. */
  bool supported = true;
  CHECK_OK(hsa_agent_extension_supported(HSA_EXTENSION_IMAGES, gpu, 1, 0, &supported));
  CHECK(!supported);
  hsa_ext_image_descriptor_t desc;
  memset(&desc, 0, sizeof desc);
  desc.geometry = HSA_EXT_IMAGE_GEOMETRY_2D;
  desc.width = desc.height = 16;
  desc.format.channel_type = HSA_EXT_IMAGE_CHANNEL_TYPE_UNSIGNED_INT8;
  desc.format.channel_order = HSA_EXT_IMAGE_CHANNEL_ORDER_RGBA;
  hsa_ext_image_t image = {0};
  CHECK_STATUS(hsa_ext_image_create(gpu, &desc, NULL, HSA_ACCESS_PERMISSION_RW, &image), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_STATUS(hsa_ext_image_create(gpu, &desc, dev, HSA_ACCESS_PERMISSION_RW, &image),
               HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED);
  CHECK(image.handle == 0);
  uint32_t caps = 99;
  CHECK_OK(hsa_ext_image_get_capability(gpu, HSA_EXT_IMAGE_GEOMETRY_2D, &desc.format, &caps));
  CHECK(caps == 0);
  hsa_ext_sampler_descriptor_t sd = {HSA_EXT_SAMPLER_COORDINATE_MODE_NORMALIZED, HSA_EXT_SAMPLER_FILTER_MODE_NEAREST,
                                     HSA_EXT_SAMPLER_ADDRESSING_MODE_REPEAT};
  hsa_ext_sampler_t sampler = {0};
  CHECK_STATUS(hsa_ext_sampler_create(gpu, &sd, &sampler), HSA_STATUS_ERROR_INVALID_AGENT);
  CHECK_STATUS(hsa_ext_sampler_destroy(gpu, sampler), HSA_STATUS_ERROR_INVALID_ARGUMENT);

  CHECK_OK(hsa_signal_destroy(done));
  CHECK_OK(hsa_amd_memory_pool_free(dev));
  CHECK_OK(hsa_shut_down());
  printf("PASS\n");
  return 0;
}

/* LD_PRELOAD shim for running Debian's rocminfo on a machine without the amdgpu driver:
 * rocminfo opens /dev/kfd before it calls hsa_init (the virtual runtime itself never needs it).
 * Opening /dev/kfd opens /dev/null instead. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>

int open(const char* path, int flags, ...) {
  static int (*real_open)(const char*, int, ...);
  if (!real_open) real_open = (int (*)(const char*, int, ...))dlsym(RTLD_NEXT, "open");
  int mode = 0;
  if (flags & O_CREAT) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, int);
    va_end(ap);
  }
  if (strcmp(path, "/dev/kfd") == 0) path = "/dev/null";
  return real_open(path, flags, mode);
}

// The stream kernels built with -O0: spills through readlane/writelane and AGPRs, generic
// (flat) accesses to private memory, calls to the unoptimized helpers.
#include "stream.hip"

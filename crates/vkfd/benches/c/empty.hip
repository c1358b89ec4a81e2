// The kernel of the dispatch benchmark: does nothing.
#include "kernels.h"

KERNEL empty() {}

// Placeholder so the module links; the implementation is being written.
#include "gpulock/core/filename.h"

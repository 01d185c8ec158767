/* The calling thread's stream capture mode as the program set it through
 * either API (gvs_remote.h): the runtime's and the driver's are one. */
#include "gvs_remote.h"

#define EXPORT __attribute__((visibility("default")))

/* CUDA starts every thread in the global mode, 0. */
static _Thread_local int mode;

EXPORT int gvs_remote_capture_mode(void)
{
    return mode;
}

EXPORT void gvs_remote_set_capture_mode(int m)
{
    mode = m;
}

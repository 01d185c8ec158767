#include <stdatomic.h>

#include "internal.h"

static _Atomic uint32_t lanes_given;
static _Thread_local uint32_t my_lane;

uint32_t gvs_client_lane(void)
{
    while (my_lane == 0)
        my_lane = atomic_fetch_add(&lanes_given, 1) + 1;
    return my_lane;
}

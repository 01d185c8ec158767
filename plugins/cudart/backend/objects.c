#include <pthread.h>

#include "objects.h"

#include "apigen_rt.h"

static struct gvs_handles *table;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_create(void)
{
    table = gvs_handles_new();
}

struct gvs_handles *be_handles(void)
{
    pthread_once(&table_once, table_create);
    return table;
}

void be_reply_u64(struct apigen_call *c, cudaError_t e, uint64_t v)
{
    apigen_put_i32(c, e);
    if (e == cudaSuccess)
        apigen_put_u64(c, v);
}

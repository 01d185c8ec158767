#include <pthread.h>

#include "objects.h"

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

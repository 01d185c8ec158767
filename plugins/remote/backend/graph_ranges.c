/* Graph allocations' address ranges (remote_be.h, graph_range_add),
 * either API's: device addresses CUDA reserved for a memory alloc node,
 * which stay device addresses whatever happens to the graph, though
 * CUDA's pointer attributes know them only while the graph runs.
 * Bounded: past the bound a range is simply not known, and nodes on it
 * are refused. */
#include "state.h"

#include <pthread.h>

#define GRAPH_RANGES_MAX 4096

static struct {
    uint64_t p, len;
} ranges[GRAPH_RANGES_MAX];
static unsigned nranges;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void remote_be_graph_range_add(uint64_t p, uint64_t len)
{
    pthread_mutex_lock(&lock);
    if (nranges < GRAPH_RANGES_MAX && p + len > p) {
        ranges[nranges].p = p;
        ranges[nranges].len = len;
        nranges++;
    }
    pthread_mutex_unlock(&lock);
}

int remote_be_graph_range_has(uint64_t p, uint64_t len)
{
    int in = 0;
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < nranges && !in; i++)
        in = p >= ranges[i].p && p - ranges[i].p <= ranges[i].len &&
             len <= ranges[i].len - (p - ranges[i].p);
    pthread_mutex_unlock(&lock);
    return in;
}

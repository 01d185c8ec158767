/*
 * What lets cudaEventRecord, cudaStreamWaitEvent, cudaMemsetAsync, a
 * copy between device memory and a cudaMemcpyAsync of memory shared with
 * the backend be
 * posted without a round trip when they cannot fail (docs/cudart.md,
 * "Posted calls"): the streams and events this process created are the
 * layer's table (gvs_remote_known_*, shared with the driver frontend),
 * each owned by its device; a memset's range must lie in one allocation
 * of the stream's device (memory.c).
 */
#include "streams.h"

#include "shared.h"

#include "cudart_fe_gen.h"
#include "cudart_ops.h"
#include "gvs_remote.h"

/* A device as the layer's owner tag (gvs_remote.h). */
static uint64_t owner(int device)
{
    return (uint64_t)device + 1;
}

void fe_known_add(enum fe_known_kind k, uint64_t id, int device)
{
    gvs_remote_known_add((int)k, id, CUDART_PLUGIN_ID, owner(device));
}

void fe_known_remove(enum fe_known_kind k, uint64_t id)
{
    gvs_remote_known_remove((int)k, id);
}

/* One the driver frontend made is unknown here: its round trip says. */
int fe_known_device(enum fe_known_kind k, uint64_t id)
{
    uint16_t api = 0;
    uint64_t o = gvs_remote_known_owner((int)k, id, &api);
    return o == 0 || api != CUDART_PLUGIN_ID || o > (uint64_t)INT32_MAX
               ? -1
               : (int)(o - 1);
}

void fe_known_forget_device(int device)
{
    gvs_remote_known_forget_owner(CUDART_PLUGIN_ID, owner(device));
}

void fe_known_capture_begins(void)
{
    gvs_remote_capture_begins();
}

void fe_known_capture_ends(void)
{
    gvs_remote_capture_ends();
}

/* The device whose stream `wire` is: a default stream is the calling
 * thread's device's; -1 when the stream is unknown. */
static int stream_device(uint64_t wire)
{
    if (wire <= (uint64_t)(uintptr_t)cudaStreamPerThread)
        return fe_thread_device();
    return fe_known_device(FE_KNOWN_STREAM, wire);
}

int fe_may_post_record(cudaEvent_t event, cudaStream_t stream,
                       unsigned int flags, int per_thread)
{
    if (flags != 0 || gvs_remote_capturing())
        return 0;
    int dev = fe_known_device(FE_KNOWN_EVENT, fe_event_wire(event));
    return dev >= 0 && dev == stream_device(fe_stream_wire(stream, per_thread));
}

int fe_may_post_copy(uint64_t stream, uint64_t dev, size_t len)
{
    if (len == 0 || gvs_remote_capturing())
        return 0;
    int d = fe_mem_range_device((const void *)(uintptr_t)dev, len);
    return d >= 0 && d == stream_device(stream);
}

int fe_may_post_d2d(unsigned long long stream, void *dst, void *src,
                    size_t count, int per_thread)
{
    (void)per_thread;
    return fe_may_post_copy(stream, (uint64_t)(uintptr_t)dst, count) &&
           fe_may_post_copy(stream, (uint64_t)(uintptr_t)src, count);
}

int fe_may_post_memset(unsigned long long stream, void *devPtr, int value,
                       size_t count, int per_thread)
{
    (void)value;
    (void)per_thread;
    return fe_may_post_copy(stream, (uint64_t)(uintptr_t)devPtr, count);
}

int fe_may_post_wait(cudaStream_t stream, cudaEvent_t event,
                     unsigned int flags, int per_thread)
{
    return flags == 0 && !gvs_remote_capturing() &&
           fe_known_device(FE_KNOWN_EVENT, fe_event_wire(event)) >= 0 &&
           stream_device(fe_stream_wire(stream, per_thread)) >= 0;
}

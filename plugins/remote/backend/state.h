/*
 * Private contracts between the files of the remoting layer's backend
 * (gvs-remote.so): the session's lanes, posted failures, handle table
 * memory quota, graphs and user objects, which plugin.c offers the API plugins as struct
 * gvs_remote_be (remote_be.h says what each does).
 */
#ifndef REMOTE_BE_STATE_H
#define REMOTE_BE_STATE_H

#include <pthread.h>
#include <time.h>

#include "remote_be.h"

/* clock.c: a condition variable whose timed waits are on
 * CLOCK_MONOTONIC, and the deadline ns from now on that clock. */
void remote_be_cond_init(pthread_cond_t *c);
void remote_be_deadline(struct timespec *t, long ns);

/* lanes.c */
struct gvs_remote_lane *remote_be_lane(struct gvs_call *call);
void remote_be_lanes_each(void (*fn)(struct gvs_remote_lane *l, void *arg),
                          void *arg);
void remote_be_lanes_free(void);
int remote_be_context_moved(uint16_t plugin);
int *remote_be_thread_capture_mode(void);
int remote_be_set_capture_mode(struct gvs_call *call, int32_t mode);

/* ptds.c */
int32_t remote_be_ptds_stream(struct gvs_call *call, void *ctx, int dev,
                              int32_t (*create)(void **s), int32_t nomem,
                              void **out);
void remote_be_ptds_lost(void *ctx, int dev);
/* The contexts' generations go (session_close). */
void remote_be_ptds_close(void);

/* plugin.c: the session's handle table. */
struct gvs_handles *remote_be_handles(void);

/* graphs.c */
void remote_be_graphs_lock(void);
void remote_be_graphs_unlock(void);
struct gvs_remote_graph *remote_be_graph_get(uint64_t id);
struct gvs_remote_graph *remote_be_graph_known(void *g);
struct gvs_remote_graph *remote_be_graph_of(void *g, int owned);
void remote_be_graph_forget(struct gvs_remote_graph *g);
struct gvs_remote_node *remote_be_node_get(uint64_t id);
uint64_t remote_be_node_id(struct gvs_remote_graph *g, void *n);
void remote_be_node_forget(struct gvs_remote_node *n);
int remote_be_exec_add(void *x, uint64_t *id);
void *remote_be_exec_get(uint64_t id);
void remote_be_exec_forget(uint64_t id);

/* graph_ranges.c */
void remote_be_graph_range_add(uint64_t p, uint64_t len);
int remote_be_graph_range_has(uint64_t p, uint64_t len);

/* user_objects.c */
void remote_be_user_objects_open(const struct gvs_host_api *host,
                                 struct gvs_session *session);
void remote_be_notify_stop(void);
/* Sends the client a notification of plugin's op unless the session is
 * closing (remote_be_notify_stop): 0, GVS_E_CLOSED, or the host's error.
 * Callable from any thread, CUDA's callback threads included. */
int remote_be_notify(uint16_t plugin, uint16_t op, const void *body,
                     size_t len);
/* As remote_be_notify, n notifications of op (1 to GVS_FRAMES_MAX) in
 * one write where the host can. */
int remote_be_notify_many(uint16_t plugin, uint16_t op,
                          const struct iovec *bodies, int n);
void *remote_be_user_object_new(uint16_t plugin, uint16_t op,
                                uint64_t callback, uint64_t *id);
void remote_be_user_object_destructor(void *record);
void remote_be_user_object_set(void *record, void *object);
void remote_be_user_object_drop(void *record);
void *remote_be_user_object_get(uint64_t id);

/* capture_file.c */
int32_t remote_be_capture_file(int32_t (*write)(const char *path, void *arg),
                               void *arg, size_t max, uint8_t **out,
                               size_t *len);

/* pinned.c: remote_be.h's context_ending. */
void remote_be_context_ending(struct gvs_call *call,
                              const struct gvs_remote_pinner *pn);

/* posted.c */
int remote_be_d2h_posted(struct gvs_call *call,
                         const struct gvs_remote_pinner *pn);
void remote_be_posted_release(const struct gvs_remote_pinner *pn);

/* batch.c */
int32_t remote_be_copy_posted(struct gvs_call *call,
                              const struct gvs_remote_batcher *b, void *stream,
                              uint64_t dst, uint64_t src, uint64_t len,
                              int kind);
void remote_be_batch_flush(struct gvs_call *call);
/* The next copy_posted's source is [src, src + len) of a shared region's
 * host memory, which the GPU reads at that address (shared.c, around
 * its copy; 0, 0 after): an ordered batch's kernel may read it. */
void remote_be_batch_source_mapped(uint64_t src, uint64_t len);
/* Whether the thread's batch holds copies not yet on their stream. */
int remote_be_batch_open(void);

/* copy_kernel.c: b's driver entry points (for copies from a shared
 * region's host memory: mapped) when the copy kernel is loaded (at the
 * first call), else NULL. */
const struct gvs_remote_copy_driver *
remote_be_copy_driver(const struct gvs_remote_batcher *b, int mapped);
/* stream's context when it is the current one, else NULL. */
CUcontext remote_be_copy_context(const struct gvs_remote_copy_driver *d,
                                 void *stream);
/* Copies the kernel takes are at most this long (copy_kernel.c says
 * why). */
#define REMOTE_BE_KERNEL_COPY_MAX ((uint64_t)16 << 20)
/* Whether the kernel reaches [dst, dst + len) and [src, src + len) in
 * ctx as the driver's copy would (copy_kernel.c says when); src_mapped:
 * the source is host memory the GPU reads at that address, only the
 * destination is asked about. */
int remote_be_kernel_copyable(const struct gvs_remote_copy_driver *d,
                              CUcontext ctx, uint64_t dst, uint64_t src,
                              uint64_t len, int src_mapped);
/* Whether the kernel reaches [p, p + len) in ctx, as
 * remote_be_kernel_copyable asks of either range; the allocation it lies
 * in into [*from, *to). */
int remote_be_kernel_reaches(const struct gvs_remote_copy_driver *d,
                             CUcontext ctx, uint64_t p, uint64_t len,
                             uint64_t *from, uint64_t *to);
/* The n copies (1 to GVS_REMOTE_BATCH_MAX) as one launch on stream,
 * ordered: by one block, one after the other: 0, or -1 when the launch
 * failed, having enqueued nothing. */
int remote_be_kernel_copies(const struct gvs_remote_copy_driver *d,
                            void *stream, const unsigned long long *dst,
                            const unsigned long long *src, const size_t *len,
                            size_t n, int ordered);

/* stage.c */
int remote_be_take_stage(struct gvs_call *call, uint8_t **image, size_t *len);

/* latch.c */
void remote_be_latch(struct gvs_call *call, uint16_t plugin, int32_t code);
/* Whether the lane holds a failure latched under plugin. */
int remote_be_latched(struct gvs_call *call, uint16_t plugin);
void remote_be_report_latched(struct gvs_call *call, uint16_t plugin,
                              int32_t success);
/* The leading i32 of call's reply (an API's result) in *result: 1, or 0
 * when it has none (posted, or too short). */
int remote_be_reply_result(const struct gvs_call *call, int32_t *result);
void remote_be_latch_clear(struct gvs_call *call);

/* callbacks.c */
void remote_be_callbacks_open(const struct gvs_host_api *host,
                              struct gvs_session *session);
struct gvs_remote_callback *remote_be_callback_new(uint64_t id, int keep);
void remote_be_callback_run(struct gvs_remote_callback *cb, int32_t status);
void remote_be_callback_free(struct gvs_remote_callback *cb);
uint64_t remote_be_callback_id(const struct gvs_remote_callback *cb);
void remote_be_callback_keep(struct gvs_remote_callback *cb);
void remote_be_callback_give(struct gvs_remote_callback *cb, void *graph,
                            const struct gvs_remote_user_objects *uo);
int remote_be_host_func(struct gvs_call *call, int32_t success,
                        int32_t nomem,
                        int32_t (*enqueue)(struct gvs_call *call,
                                           uint64_t stream, uint32_t kind,
                                           uint32_t flags,
                                           struct gvs_remote_callback *cb));
void remote_be_callbacks_release(void);
/* plugin.c */
struct gvs_handles *remote_be_handles(void);

/* intern.c */
int remote_be_handle_intern(uint16_t type, void *obj, uint64_t *id);
void *remote_be_handle_forget(uint16_t type, uint64_t id);
void remote_be_intern_close(void);

/* twins.c */
int remote_be_atomic_caps(struct gvs_call *call,
                          int32_t (*caps)(struct gvs_call *call,
                                          unsigned int *out,
                                          const int32_t *ops,
                                          unsigned int n, int dev,
                                          int peer));
int remote_be_logs_dump(struct gvs_call *call,
                        int32_t (*dump)(struct gvs_call *call,
                                        unsigned int *it, char *buf,
                                        size_t *size, unsigned int flags));

/* quota.c */
void remote_be_quota_open(const struct gvs_host_api *host,
                          struct gvs_session *session);
void remote_be_quota_close(void);
int remote_be_quota_take(uint64_t bytes);
void remote_be_quota_settle(int ok, enum gvs_remote_quota_kind kind,
                            uint64_t key, int device, uint64_t owner,
                            uint64_t taken, uint64_t bytes);
void remote_be_quota_release(enum gvs_remote_quota_kind kind, uint64_t key);
int remote_be_quota_device_unnamed(int device);
void remote_be_quota_name_device(int device, const uint8_t uuid[16]);
void remote_be_quota_release_device(int device);
void remote_be_quota_release_owner(uint64_t owner);
void remote_be_quota_mem_info(size_t *free, size_t *total);
void remote_be_quota_usage(int device, uint64_t *bytes, uint64_t *quota);

/* plugin.c: the session's handle table. */
struct gvs_handles *remote_be_handles(void);

/* arrays.c */
int remote_be_array_add(uint16_t type, void *handle, uint64_t *id);
void *remote_be_array_get(uint16_t type, uint64_t id, int *sub);
int32_t remote_be_array_sub(uint16_t type, uint64_t parent, uint32_t key,
                            int32_t (*get)(void *parent, uint32_t key,
                                           void **sub),
                            int32_t missing, int32_t nomem, uint64_t *id);
int remote_be_array_remove(uint16_t type, uint64_t id);
/* The table's release at session close: frees the layer's array objects
 * (the plugins free their own objects before). */
void remote_be_array_release(uint16_t type, void *obj, void *arg);

/* texobjs.c */
int remote_be_texobj_keep(uint16_t plugin, int surface, uint64_t value,
                          const uint8_t *desc, size_t len);
int32_t remote_be_texobj_destroy(uint16_t plugin, int surface, uint64_t value,
                                 int32_t (*destroy)(uint64_t value),
                                 int32_t missing);
int remote_be_texobj_desc(uint16_t plugin, int surface, uint64_t value,
                          uint8_t **desc, size_t *len);
/* session_close: the values kept go (CUDA's objects go with the worker). */
void remote_be_texobjs_free(void);

/* shared.c */
void remote_be_shared_open(const struct gvs_host_api *host,
                           struct gvs_session *session);
int remote_be_hostmem_share(struct gvs_call *call,
                            const struct gvs_remote_pinner *pn);
int remote_be_hostmem_unshare(struct gvs_call *call,
                              const struct gvs_remote_pinner *pn);
int remote_be_shared_may_wait(const struct gvs_buf *in, uint32_t lane,
                              uint16_t plugin);
void remote_be_shared_flush(struct gvs_call *call,
                            const struct gvs_remote_pinner *pn);
/* The thread's batch is on its stream (batch.c): the signal of the last
 * copy of a shared region that joined it is held or enqueued now. */
void remote_be_shared_batched(struct gvs_call *call);
int remote_be_memcpy_shared(struct gvs_call *call,
                            const struct gvs_remote_pinner *pn);
void remote_be_shared_release(const struct gvs_remote_pinner *pn);
int remote_be_shared_device_has(uint64_t p, uint64_t len);
void *remote_be_shared_host(uint64_t p, uint64_t len);
uint64_t remote_be_shared_client(const void *w);

/* pinned.c */
void remote_be_pinned_open(const struct gvs_host_api *h);
void *remote_be_stage_d2h(struct gvs_call *call, size_t len,
                          const struct gvs_remote_piece *p,
                          const struct gvs_remote_pinner *pn, int *read,
                          int32_t *result);
void remote_be_stage_d2h_next(struct gvs_call *call,
                              const struct gvs_remote_piece *p,
                              const void *buf,
                              const struct gvs_remote_pinner *pn);
void remote_be_stage_release(const struct gvs_remote_pinner *pn);

#endif

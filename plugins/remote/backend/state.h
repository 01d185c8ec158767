/*
 * Private contracts between the files of the remoting layer's backend
 * (gvs-remote.so): the session's lanes, posted failures, handle table
 * memory quota, graphs and user objects, which plugin.c offers the API plugins as struct
 * gvs_remote_be (remote_be.h says what each does).
 */
#ifndef REMOTE_BE_STATE_H
#define REMOTE_BE_STATE_H

#include "remote_be.h"

/* lanes.c */
struct gvs_remote_lane *remote_be_lane(struct gvs_call *call);
void remote_be_lanes_each(void (*fn)(struct gvs_remote_lane *l, void *arg),
                          void *arg);
void remote_be_lanes_free(void);
int remote_be_context_moved(uint16_t plugin);
int *remote_be_thread_capture_mode(void);
int remote_be_set_capture_mode(struct gvs_call *call, int32_t mode);

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

/* user_objects.c */
void remote_be_user_objects_open(const struct gvs_host_api *host,
                                 struct gvs_session *session);
void remote_be_notify_stop(void);
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

/* stage.c */
int remote_be_take_stage(struct gvs_call *call, uint8_t **image, size_t *len);

/* latch.c */
void remote_be_latch(struct gvs_call *call, uint16_t plugin, int32_t code);
void remote_be_report_latched(struct gvs_call *call, uint16_t plugin,
                              int32_t success);
void remote_be_latch_clear(struct gvs_call *call);

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

#endif

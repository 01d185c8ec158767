/*
 * What the remoting layer's frontend, libgvs-remote.so.0, offers the API
 * frontends (libcudart.so.13, libcuda.so.1; docs/remoting.md): one copy
 * per process, so that what it keeps is the same for all of them.
 *
 * The round trips of the calls generated from an API's description
 * (tools/apigen/README.md, "Generated files"): an API frontend describes
 * itself once in a struct gvs_remote_api and its generated hooks call
 * these.  Results are the API's own codes (cudaError_t, CUresult) as
 * int32_t: the layer only moves them.
 */
#ifndef GVS_REMOTE_H
#define GVS_REMOTE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "apigen_rt.h"
#include "gvs/client.h"

struct gvs_remote_api {
    uint16_t plugin; /* the API plugin's wire id */
    /* Its codes for success, for out of memory, and for a reply that
     * cannot be decoded. */
    int32_t success, nomem, unknown;
    /* The process's connected client, with the API's own session
     * initialization done: success, or the API's sticky failure. */
    int32_t (*client)(struct gvs_client **out);
    /* The API's code for a failed gvs_client_* call. */
    int32_t (*transport_error)(int rc);
    /* Caller holds the client lock: what must leave before a request
     * with these apigen flags (APIGEN_DEVICE: the lane's device brought
     * in line, say).  0 or a negative GVS_E_* code.  NULL: nothing. */
    int (*before_send_locked)(struct gvs_client *cl, unsigned flags);
};

/* Caller holds the client lock.  Sends one request of the calling
 * thread's lane, after what api->before_send_locked sends.  id may be
 * NULL for a noreply request; otherwise the caller releases the lock and
 * collects the reply with gvs_client_wait.  0 or a negative GVS_E_*. */
int gvs_remote_send_locked(const struct gvs_remote_api *api,
                           struct gvs_client *cl, uint16_t op,
                           unsigned flags, int noreply,
                           const struct iovec *iov, int n, uint64_t *id);

/* The generated hooks.  begin connects and takes this thread's request
 * and reply buffers (one pair per thread, kept between calls); run sends
 * the request and waits, and returns the transport's error or the
 * reply's leading result; post sends it without waiting; end checks that
 * the reply was read exactly (api->unknown if not).  Each returns r
 * unchanged where there is nothing to check. */
int32_t gvs_remote_begin(const struct gvs_remote_api *api,
                         struct apigen_call *c);
int32_t gvs_remote_run(const struct gvs_remote_api *api,
                       struct apigen_call *c, uint16_t op, unsigned flags);
int32_t gvs_remote_post(const struct gvs_remote_api *api,
                        struct apigen_call *c, uint16_t op, unsigned flags);
int32_t gvs_remote_end(const struct gvs_remote_api *api,
                       struct apigen_call *c, int32_t r);

/* Caller holds the client lock.  Posts image in STAGE pieces of the
 * calling thread's lane, for the API's load that follows (an image may
 * be larger than a request).  0 or a negative GVS_E_* code. */
int gvs_remote_stage_locked(struct gvs_client *cl, const uint8_t *image,
                            size_t len);

/* Caller holds the client lock.  Posts the calling thread's current
 * driver context (its handle id, 0 for none) as its lane's, for the
 * requests that follow.  0 or a negative GVS_E_* code. */
int gvs_remote_set_context_locked(struct gvs_client *cl, uint64_t ctx);

/* The bytes of the module image at code, as CUDA reads it: a fat
 * binary (or nvcc's wrapper of one, followed to its data), an ELF cubin
 * (up to its furthest header or section), or else NUL-terminated PTX
 * text (its NUL included).  Sets *start to the image's first byte; 0
 * when the image is malformed or larger than a session may send. */
size_t gvs_remote_image_size(const void *code, const uint8_t **start);

/* Posting launches.  A launch in a configuration the backend already
 * accepted for the kernel cannot fail at launch time any more: it is
 * posted without waiting, and what CUDA could still report is an
 * execution failure, reported at a later synchronization natively too
 * (the backend latches it for the lane's next synchronizing call).
 * Other launches wait, so that a bad configuration is reported at once.
 *
 * A configuration as one word (valid bit, device, threads per block,
 * dynamic shared memory), 0 when it is outside what every device allows
 * (never accepted, so never posted). */
uint64_t gvs_remote_launch_config(int dev, const uint32_t grid[3],
                                  const uint32_t block[3], uint64_t shmem);
/* Whether a launch in configuration want cannot fail at launch time
 * because ok was accepted. */
int gvs_remote_launch_within(uint64_t want, uint64_t ok);

/* User objects (remote_be.h, "User objects"): CUDA keeps the references
 * on the backend, the destructor is the program's.  An API frontend
 * records it here before the object's create request leaves (the object
 * may be gone, and the notification on its way, before the reply is
 * read) and sends the id as the object's callback; the handler of its
 * plugin's destroy notification hands the body (u64 id) to run, which
 * runs the destructor once and forgets it.  As natively (no destructor
 * sync), no call waits for a destructor.  add answers 0 when out of
 * memory; forget drops a record whose object CUDA refused to make. */
uint64_t gvs_remote_destructor_add(void (*fn)(void *), void *ptr);
void gvs_remote_destructor_forget(uint64_t id);
struct gvs_buf;
void gvs_remote_destructor_run(struct gvs_buf *body);

/* The calling thread's stream capture mode (CUstreamCaptureMode, the
 * runtime's numbers alike), one for both APIs as natively: an API
 * frontend exchanging it sends its lane the new one (the backend's lane
 * capture_mode, remote_be.h), then sets it here. */
int gvs_remote_capture_mode(void);
void gvs_remote_set_capture_mode(int mode);

/* Writes len bytes to the file at path (created or truncated), as CUDA
 * would have written it where the program runs: 0, or -1 when the OS
 * refused (the API's "operating system" error). */
int gvs_remote_write_file(const char *path, const uint8_t *bytes,
                          size_t len);

/* A reply's leading result; api->unknown if absent. */
int32_t gvs_remote_reply_result(const struct gvs_remote_api *api,
                                struct apigen_call *c);

#endif

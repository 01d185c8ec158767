/*
 * gvs wire protocol: frames and the handshake.  docs/protocol.md is the
 * normative description; this header is its C binding.
 *
 * Frame = 28-byte header + body.  Header fields, little-endian:
 *   u32 magic   GVS_FRAME_MAGIC
 *   u32 len     body length, <= the receiver's maximum
 *   u16 plugin  0 = control, else a plugin id
 *   u16 op      operation number inside the plugin
 *   u32 flags   GVS_F_*
 *   u32 lane    the client thread the request comes from (0 = none);
 *               echoed in the reply
 *   u64 id      request id, chosen by the client, echoed in the reply;
 *               for a GVS_F_NOTIFY frame, chosen by the server
 *
 * Lanes: each application thread of a client is a lane.  gvsd keeps the
 * requests of one lane in order and runs blocking operations (a
 * synchronization waiting for the GPU) on a thread of that lane, so one
 * application thread waiting never holds up the others.
 */
#ifndef GVS_PROTO_H
#define GVS_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "gvs/auth.h"
#include "gvs/buf.h"
#include "gvs/comm.h"

#define GVS_FRAME_MAGIC 0x31535647u /* "GVS1" */
#define GVS_FRAME_HDR_LEN 28u
#define GVS_PROTO_VERSION 7u
/* Largest body accepted by default: a bulk chunk plus its arguments. */
#define GVS_FRAME_MAX_DEFAULT ((size_t)(16u << 20) + 4096u)
/* Bulk data is cut into chunks of this size so no frame exceeds the max. */
#define GVS_BULK_CHUNK ((size_t)8u << 20)

enum gvs_frame_flags {
    GVS_F_REPLY = 1u << 0,   /* this frame answers request `id` */
    GVS_F_NOREPLY = 1u << 1, /* request: the client does not wait */
    GVS_F_NOTIFY = 1u << 2,  /* server to client, unasked: an event such as
                              * a host callback to run; never answered */
};
#define GVS_F_KNOWN (GVS_F_REPLY | GVS_F_NOREPLY | GVS_F_NOTIFY)

struct gvs_frame_hdr {
    uint32_t len;
    uint16_t plugin;
    uint16_t op;
    uint32_t flags;
    uint32_t lane;
    uint64_t id;
};

/* Control plugin (id 0) operations. */
enum gvs_ctl_op {
    GVS_CTL_HELLO = 1, /* handshake, must be the first frame */
    GVS_CTL_PING = 2,  /* empty body, empty reply */
    GVS_CTL_BYE = 3,   /* orderly close, no reply */
    GVS_CTL_STATUS = 4, /* empty body; reply: gvsd's sessions and GPUs */
    /* Empty body, no reply: the program is exiting, so what it sent
     * before its connection ends is served.  A connection that ends
     * without it ends a program that was killed (or did not exit through
     * its libraries' destructors): what was read of it and not yet
     * started is dropped, as the driver abandons a killed process's
     * work. */
    GVS_CTL_LEAVING = 5,
};

/* Encodes a header into GVS_FRAME_HDR_LEN bytes. */
void gvs_frame_hdr_encode(const struct gvs_frame_hdr *h,
                          uint8_t out[GVS_FRAME_HDR_LEN]);
/* Decodes and validates a header: GVS_E_PROTO on bad magic or unknown
 * flags, GVS_E_TOOBIG when len > max.  Zeroes *h on failure. */
int gvs_frame_hdr_decode(const uint8_t in[GVS_FRAME_HDR_LEN], size_t max,
                         struct gvs_frame_hdr *h);

/* Sends one frame whose body is the concatenation of iov[0..n-1];
 * h->len is set from them.  One sendv call: header and body leave
 * together. */
int gvs_frame_sendv(struct gvs_conn *c, struct gvs_frame_hdr *h,
                    const struct iovec *iov, int n);
/* Most frames gvs_frames_sendv sends at once. */
#define GVS_FRAMES_MAX 32
/* Sends n frames (1 to GVS_FRAMES_MAX), frame i with header hs[i] (its
 * len set) and body bodies[i], in one sendv call: GVS_E_INVAL for n out
 * of range, GVS_E_TOOBIG for a body longer than a frame's length field
 * holds. */
int gvs_frames_sendv(struct gvs_conn *c, struct gvs_frame_hdr *hs,
                     const struct iovec *bodies, int n);
/* Sends one frame with the unread bytes of body (NULL: empty body). */
int gvs_frame_send(struct gvs_conn *c, struct gvs_frame_hdr *h,
                   const struct gvs_buf *body);

/* Receives one frame: validates the header against max before reading
 * the body, then reads the body into `body` (reset first), growing it
 * only as bytes arrive.  GVS_E_CLOSED if the peer closed before a header
 * started, GVS_E_PROTO if it closed mid-frame.  GVS_E_TOOBIG when the
 * header's len exceeds max or the body buffer's maximum (nothing of the
 * body is read).  GVS_E_TIMEOUT when the connection's receive timeout
 * expires; after one mid-frame the stream is out of step: close it. */
int gvs_frame_recv(struct gvs_conn *c, size_t max, struct gvs_frame_hdr *h,
                   struct gvs_buf *body);

/* The two halves of gvs_frame_recv, for a reader that chooses where a
 * body goes from its header (the client's receiver thread).  recv_hdr
 * fails as gvs_frame_recv does before the body; *h is zeroed on failure.
 * recv_body reads the len body bytes that follow into body (reset
 * first); when body is NULL, or len exceeds its maximum, the bytes are
 * read and dropped so the stream stays in step, and the latter returns
 * GVS_E_TOOBIG.  GVS_E_PROTO if the peer closes mid-body. */
int gvs_frame_recv_hdr(struct gvs_conn *c, size_t max,
                       struct gvs_frame_hdr *h);
/* gvs_frame_recv_hdr that, when it fails on what the peer sent, says
 * what in why (NUL-terminated, cut to len): the bad magic, the unknown
 * flags, the length and the maximum, or how much of the header came
 * before the stream ended.  Transport errors leave it "". */
int gvs_frame_recv_hdr_why(struct gvs_conn *c, size_t max,
                           struct gvs_frame_hdr *h, char *why, size_t len);
int gvs_frame_recv_body(struct gvs_conn *c, size_t len, struct gvs_buf *body);

/* Handshake ------------------------------------------------------------
 * HELLO request body:
 *   u32 proto_version, u32 pid, str program (<= 255 bytes),
 *   u32 nplugins (<= GVS_MAX_PLUGINS), nplugins x { u16 id, str name,
 *   u64 table_hash }, u8 auth (GVS_HELLO_AUTH_*); with
 *   GVS_HELLO_AUTH_HMAC: u8 client_nonce[32], u8 mac[32]
 * HELLO reply body:
 *   i32 status (0, GVS_HELLO_CHALLENGE or GVS_E_*), u32 server
 *   proto_version, str message, u32 session id; with
 *   GVS_HELLO_CHALLENGE: u8 server_nonce[32].
 * On a status below 0 the server closes the connection; on
 * GVS_HELLO_CHALLENGE it waits for a second HELLO carrying the proof
 * (gvs/auth.h), within the same handshake timeout.  */
#define GVS_MAX_PLUGINS 16
#define GVS_NAME_MAX 255

struct gvs_hello_plugin {
    uint16_t id;
    char name[GVS_NAME_MAX + 1];
    uint64_t table_hash;
};

/* The auth field of a HELLO. */
enum gvs_hello_auth {
    GVS_HELLO_AUTH_NONE = 0, /* no proof */
    GVS_HELLO_AUTH_HMAC = 1, /* client nonce and token proof follow */
};
/* Bytes of the auth field with a proof: the transcript a proof covers
 * is the body without them (gvs/auth.h). */
#define GVS_HELLO_PROOF_LEN (1u + GVS_AUTH_NONCE_LEN + GVS_AUTH_MAC_LEN)

struct gvs_hello {
    uint32_t version;
    uint32_t pid;
    char program[GVS_NAME_MAX + 1];
    uint32_t nplugins;
    struct gvs_hello_plugin plugins[GVS_MAX_PLUGINS];
    uint8_t auth; /* enum gvs_hello_auth */
    uint8_t client_nonce[GVS_AUTH_NONCE_LEN]; /* GVS_HELLO_AUTH_HMAC */
    uint8_t mac[GVS_AUTH_MAC_LEN];            /* GVS_HELLO_AUTH_HMAC */
};

/* GVS_E_INVAL on an unknown auth kind. */
int gvs_hello_encode(const struct gvs_hello *h, struct gvs_buf *out);
/* Strict: rejects truncation, oversize strings, too many plugins, an
 * unknown auth kind (GVS_E_PROTO) and trailing bytes.  Zeroes *h on
 * failure. */
int gvs_hello_decode(struct gvs_buf *in, struct gvs_hello *h);

/* Status of a HELLO reply asking for a token proof: the only status
 * above 0. */
#define GVS_HELLO_CHALLENGE 1

struct gvs_hello_reply {
    int32_t status;
    uint32_t version;
    char message[GVS_NAME_MAX + 1];
    uint32_t session;
    uint8_t nonce[GVS_AUTH_NONCE_LEN]; /* GVS_HELLO_CHALLENGE only */
};
/* The nonce is encoded with GVS_HELLO_CHALLENGE only, so every other
 * reply keeps the layout older clients read.  decode: GVS_E_PROTO on a
 * status above GVS_HELLO_CHALLENGE. */
int gvs_hello_reply_encode(const struct gvs_hello_reply *r,
                           struct gvs_buf *out);
int gvs_hello_reply_decode(struct gvs_buf *in, struct gvs_hello_reply *r);

/* FNV-1a 64 over bytes; used for operation-table hashes. */
uint64_t gvs_hash64(uint64_t seed, const void *p, size_t len);
#define GVS_HASH_SEED 0xcbf29ce484222325ull

#endif

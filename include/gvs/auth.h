/*
 * Access control shared by gvsd and the frontend (docs/security.md):
 * the token proof of the HELLO exchange (docs/protocol.md, "Token
 * authentication"), the peer allow-lists and the rule that keeps gvsd
 * off the network without tokens.
 *
 * A token proof is HMAC-SHA256 keyed with the token's secret over
 *
 *     "gvs-auth-1" || server_nonce[32] || client_nonce[32] || transcript
 *
 * where the transcript is the HELLO body that carries the proof, up to
 * (not including) its auth field.  The server's nonce makes every proof
 * good for one connection only; the transcript ties it to what the
 * client asked for; the secret never leaves either side.
 *
 * Functions return 0 or a negative GVS_E_* code unless stated.
 */
#ifndef GVS_AUTH_H
#define GVS_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "gvs/config.h"

#define GVS_AUTH_NONCE_LEN 32u
#define GVS_AUTH_MAC_LEN 32u
#define GVS_AUTH_LABEL "gvs-auth-1"

/* Fills out with bytes from a cryptographic random generator.
 * GVS_E_IO when the generator fails (no proof can be asked then). */
int gvs_auth_nonce(uint8_t out[GVS_AUTH_NONCE_LEN]);

/* The proof of secret (NUL-terminated, non-empty) over the nonces and
 * transcript[0..len), into mac.  GVS_E_INVAL on an empty secret,
 * GVS_E_NOMEM / GVS_E_IO when the crypto library fails. */
int gvs_auth_mac(const char *secret,
                 const uint8_t server_nonce[GVS_AUTH_NONCE_LEN],
                 const uint8_t client_nonce[GVS_AUTH_NONCE_LEN],
                 const void *transcript, size_t len,
                 uint8_t mac[GVS_AUTH_MAC_LEN]);

/* Which of cfg's tokens made mac.  Every token is tried and each is
 * compared in constant time, so the time taken says nothing about how
 * close a forged proof came nor which token matched.  Returns the index
 * (>= 0), GVS_E_DENIED when none matches, or an error of gvs_auth_mac. */
int gvs_auth_find_token(const struct gvs_config *cfg,
                        const uint8_t server_nonce[GVS_AUTH_NONCE_LEN],
                        const uint8_t client_nonce[GVS_AUTH_NONCE_LEN],
                        const void *transcript, size_t len,
                        const uint8_t mac[GVS_AUTH_MAC_LEN]);

/* How sessions of token i are shown: "token NAME", or "token #N" (N
 * counting token lines from 1) for a token without a name. */
void gvs_auth_token_identity(const struct gvs_config *cfg, int i, char *out,
                             size_t outlen);

/* 1 when a local peer with these credentials may connect: its uid is in
 * allow_uid or its gid in allow_gid, or both lists are empty; else 0. */
int gvs_auth_peer_allowed(const struct gvs_config *cfg, uint32_t uid,
                          uint32_t gid);

/* Whether listening on uri reaches beyond this host: 1 for a tcp:// or
 * tls:// address that is not loopback (127.0.0.0/8, ::1, or a name all
 * of whose addresses are such), 0 otherwise (unix://, shm://, loopback).
 * GVS_E_URI when uri does not parse or its host does not resolve. */
int gvs_auth_uri_exposed(const char *uri);

/* Resolves a group given by name or decimal gid.  GVS_E_CONFIG when no
 * such group exists, GVS_E_NOMEM. */
int gvs_auth_group_id(const char *group, uint32_t *gid);

#endif

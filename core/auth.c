#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "gvs/auth.h"
#include "gvs/comm.h"
#include "gvs/err.h"
#include "gvs/mem.h"

int gvs_auth_nonce(uint8_t out[GVS_AUTH_NONCE_LEN])
{
    return RAND_bytes(out, (int)GVS_AUTH_NONCE_LEN) == 1 ? 0 : GVS_E_IO;
}

/* The MAC over the labelled input, keyed with key[0..keylen). */
static int hmac(EVP_MAC *alg, const char *key, size_t keylen,
                const uint8_t *sn, const uint8_t *cn, const void *t,
                size_t len, uint8_t mac[GVS_AUTH_MAC_LEN])
{
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(alg);
    if (ctx == NULL)
        return GVS_E_NOMEM;
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end()};
    size_t out = 0;
    int ok = EVP_MAC_init(ctx, (const unsigned char *)key, keylen, params) &&
             EVP_MAC_update(ctx, (const unsigned char *)GVS_AUTH_LABEL,
                            strlen(GVS_AUTH_LABEL)) &&
             EVP_MAC_update(ctx, sn, GVS_AUTH_NONCE_LEN) &&
             EVP_MAC_update(ctx, cn, GVS_AUTH_NONCE_LEN) &&
             (len == 0 || EVP_MAC_update(ctx, t, len)) &&
             EVP_MAC_final(ctx, mac, &out, GVS_AUTH_MAC_LEN) &&
             out == GVS_AUTH_MAC_LEN;
    /* Frees the context's copy of the key, wiped (OpenSSL cleanses it). */
    EVP_MAC_CTX_free(ctx);
    return ok ? 0 : GVS_E_IO;
}

static EVP_MAC *hmac_alg(void)
{
    return EVP_MAC_fetch(NULL, "HMAC", NULL);
}

int gvs_auth_mac(const char *secret,
                 const uint8_t server_nonce[GVS_AUTH_NONCE_LEN],
                 const uint8_t client_nonce[GVS_AUTH_NONCE_LEN],
                 const void *transcript, size_t len,
                 uint8_t mac[GVS_AUTH_MAC_LEN])
{
    if (secret == NULL || secret[0] == '\0')
        return GVS_E_INVAL;
    EVP_MAC *alg = hmac_alg();
    if (alg == NULL)
        return GVS_E_IO;
    int rc = hmac(alg, secret, strlen(secret), server_nonce, client_nonce,
                  transcript, len, mac);
    EVP_MAC_free(alg);
    return rc;
}

int gvs_auth_find_token(const struct gvs_config *cfg,
                        const uint8_t server_nonce[GVS_AUTH_NONCE_LEN],
                        const uint8_t client_nonce[GVS_AUTH_NONCE_LEN],
                        const void *transcript, size_t len,
                        const uint8_t mac[GVS_AUTH_MAC_LEN])
{
    EVP_MAC *alg = hmac_alg();
    if (alg == NULL)
        return GVS_E_IO;
    int found = GVS_E_DENIED, rc = 0;
    for (int i = 0; i < cfg->ntokens && rc == 0; i++) {
        const char *secret = cfg->tokens[i].secret;
        uint8_t want[GVS_AUTH_MAC_LEN];
        rc = hmac(alg, secret, strlen(secret), server_nonce, client_nonce,
                  transcript, len, want);
        /* No early exit: the first match is kept, the rest still run. */
        if (rc == 0 && CRYPTO_memcmp(want, mac, GVS_AUTH_MAC_LEN) == 0 &&
            found < 0)
            found = i;
        explicit_bzero(want, sizeof(want));
    }
    EVP_MAC_free(alg);
    return rc < 0 ? rc : found;
}

void gvs_auth_token_identity(const struct gvs_config *cfg, int i, char *out,
                             size_t outlen)
{
    const char *name = cfg->tokens[i].name;
    if (name != NULL && name[0] != '\0')
        snprintf(out, outlen, "token %s", name);
    else
        snprintf(out, outlen, "token #%d", i + 1);
}

static int listed(const unsigned *ids, int n, uint32_t id)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

int gvs_auth_peer_allowed(const struct gvs_config *cfg, uint32_t uid,
                          uint32_t gid)
{
    if (cfg->nallow_uid == 0 && cfg->nallow_gid == 0)
        return 1;
    return listed(cfg->allow_uid, cfg->nallow_uid, uid) ||
           listed(cfg->allow_gid, cfg->nallow_gid, gid);
}

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return 1;
        /* ::ffff:127.x.y.z reaches only this host too. */
        return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
    }
    return 0;
}

int gvs_auth_uri_exposed(const char *uri)
{
    struct gvs_uri u;
    if (gvs_uri_parse(uri, &u) < 0)
        return GVS_E_URI;
    if (strcmp(u.scheme, "tcp") != 0 && strcmp(u.scheme, "tls") != 0)
        return 0;
    /* Every address the name may bind to must be loopback: "localhost"
     * is, a name that also maps to a routable address is not. */
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE};
    struct addrinfo *res = NULL;
    if (getaddrinfo(u.host, NULL, &hints, &res) != 0 || res == NULL)
        return GVS_E_URI;
    int exposed = 0;
    for (const struct addrinfo *a = res; a != NULL; a = a->ai_next)
        exposed |= !is_loopback(a->ai_addr);
    freeaddrinfo(res);
    return exposed;
}

int gvs_auth_group_id(const char *group, uint32_t *gid)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(group, &end, 10);
    if (group[0] >= '0' && group[0] <= '9' && *end == '\0' && errno == 0 &&
        v <= UINT32_MAX - 1) {
        *gid = (uint32_t)v;
        return 0;
    }
    long max = sysconf(_SC_GETGR_R_SIZE_MAX);
    size_t size = max > 0 ? (size_t)max : 16384;
    for (;;) {
        char *buf = gvs_malloc(size);
        if (buf == NULL)
            return GVS_E_NOMEM;
        struct group gr, *found = NULL;
        int e = getgrnam_r(group, &gr, buf, size, &found);
        if (found != NULL)
            *gid = (uint32_t)gr.gr_gid;
        gvs_free(buf);
        if (e == ERANGE && size < ((size_t)1 << 20)) {
            size *= 2;
            continue;
        }
        return found != NULL ? 0 : GVS_E_CONFIG;
    }
}

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include "gvs/comm.h"
#include "gvs/err.h"

/* Longer text cannot be any valid URI: host and path fields are bounded. */
#define URI_TEXT_MAX 300

static int is_host_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
}

/* "1".."65535" or "0", decimal, nothing after. */
static int parse_port(const char *s, unsigned *port)
{
    unsigned v = 0;
    size_t n = 0;
    for (; s[n] >= '0' && s[n] <= '9'; n++) {
        if (n == 5)
            return GVS_E_URI;
        v = v * 10 + (unsigned)(s[n] - '0');
    }
    if (n == 0 || s[n] != '\0' || v > 65535)
        return GVS_E_URI;
    *port = v;
    return 0;
}

/* unix, shm and ivshmem: an absolute path (a socket's, or ivshmem's
 * region file or PCI resource). */
static int parse_unix(const char *rest, struct gvs_uri *u)
{
    size_t len = strlen(rest);
    if (rest[0] != '/' || len >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return GVS_E_URI;
    memcpy(u->path, rest, len + 1);
    return 0;
}

static int parse_tcp(const char *rest, struct gvs_uri *u)
{
    const char *host = rest, *colon;
    size_t hostlen;
    if (rest[0] == '[') {
        const char *close = strchr(rest, ']');
        if (close == NULL || close[1] != ':')
            return GVS_E_URI;
        host = rest + 1;
        hostlen = (size_t)(close - host);
        colon = close + 1;
    } else {
        colon = strchr(rest, ':');
        if (colon == NULL)
            return GVS_E_URI;
        hostlen = (size_t)(colon - rest);
        for (size_t i = 0; i < hostlen; i++)
            if (!is_host_char(rest[i]))
                return GVS_E_URI;
    }
    if (hostlen == 0 || hostlen >= sizeof(u->host))
        return GVS_E_URI;
    memcpy(u->host, host, hostlen);
    u->host[hostlen] = '\0';
    if (rest[0] == '[') {
        struct in6_addr a;
        if (inet_pton(AF_INET6, u->host, &a) != 1)
            return GVS_E_URI;
    }
    return parse_port(colon + 1, &u->port);
}

int gvs_uri_parse(const char *s, struct gvs_uri *out)
{
    memset(out, 0, sizeof(*out));
    if (s == NULL || strnlen(s, URI_TEXT_MAX + 1) > URI_TEXT_MAX)
        return GVS_E_URI;
    const char *sep = strstr(s, "://");
    if (sep == NULL)
        return GVS_E_URI;
    size_t slen = (size_t)(sep - s);
    int r = GVS_E_URI;
    if ((slen == 4 && memcmp(s, "unix", 4) == 0) ||
        (slen == 3 && memcmp(s, "shm", 3) == 0) ||
        (slen == 7 && memcmp(s, "ivshmem", 7) == 0))
        r = parse_unix(sep + 3, out);
    else if (slen == 3 &&
             (memcmp(s, "tcp", 3) == 0 || memcmp(s, "tls", 3) == 0))
        r = parse_tcp(sep + 3, out);
    if (r < 0) {
        memset(out, 0, sizeof(*out));
        return r;
    }
    memcpy(out->scheme, s, slen);
    out->scheme[slen] = '\0';
    return 0;
}

int gvs_uri_format(const struct gvs_uri *u, char *out, size_t outlen)
{
    int n;
    if (outlen == 0)
        return GVS_E_INVAL;
    out[0] = '\0';
    if (strcmp(u->scheme, "unix") == 0 || strcmp(u->scheme, "shm") == 0 ||
        strcmp(u->scheme, "ivshmem") == 0)
        n = snprintf(out, outlen, "%s://%s", u->scheme, u->path);
    else if (strcmp(u->scheme, "tcp") == 0 || strcmp(u->scheme, "tls") == 0)
        n = snprintf(out, outlen,
                     strchr(u->host, ':') ? "%s://[%s]:%u" : "%s://%s:%u",
                     u->scheme, u->host, u->port);
    else
        return GVS_E_URI;
    if (n < 0 || (size_t)n >= outlen) {
        out[0] = '\0';
        return GVS_E_TOOBIG;
    }
    return 0;
}

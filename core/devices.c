#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gvs/devices.h"
#include "gvs/err.h"
#include "gvs/mem.h"

/* One entry of a list: its text and length. */
struct entry {
    const char *p;
    size_t n;
};

static int is_ordinal(const struct entry *e)
{
    if (e->n == 0 || e->n > 9)
        return 0;
    for (size_t i = 0; i < e->n; i++)
        if (!isdigit((unsigned char)e->p[i]))
            return 0;
    return 1;
}

static int is_uuid(const struct entry *e)
{
    if (e->n <= 4 || (strncmp(e->p, "GPU-", 4) != 0 &&
                      strncmp(e->p, "MIG-", 4) != 0))
        return 0;
    for (size_t i = 4; i < e->n; i++)
        if (!isxdigit((unsigned char)e->p[i]) && e->p[i] != '-')
            return 0;
    return 1;
}

/* Splits s at commas into at most GVS_DEVICES_MAX entries; the count. */
static int split(const char *s, struct entry *out)
{
    int n = 0;
    while (n < GVS_DEVICES_MAX) {
        const char *comma = strchr(s, ',');
        size_t len = comma != NULL ? (size_t)(comma - s) : strlen(s);
        out[n++] = (struct entry){s, len};
        if (comma == NULL)
            break;
        s = comma + 1;
    }
    return n;
}

int gvs_devices_check(const char *s)
{
    struct entry e[GVS_DEVICES_MAX];
    if (s == NULL || *s == '\0' || strlen(s) > GVS_DEVICES_MAX_LEN)
        return GVS_E_INVAL;
    int n = split(s, e);
    if (strchr(e[n - 1].p, ',') != NULL)
        return GVS_E_INVAL; /* more entries than GVS_DEVICES_MAX */
    for (int i = 0; i < n; i++)
        if (!is_ordinal(&e[i]) && !is_uuid(&e[i]))
            return GVS_E_INVAL;
    return 0;
}

/* Whether a and b agree: one is a prefix of the other, case aside. */
static int uuid_agrees(const struct entry *a, const struct entry *b)
{
    size_t n = a->n < b->n ? a->n : b->n;
    return strncasecmp(a->p, b->p, n) == 0;
}

/* The entry of base that s picks, or NULL. */
static const struct entry *pick(const struct entry *s,
                                const struct entry *base, int nbase)
{
    if (is_ordinal(s)) {
        long i = strtol(s->p, NULL, 10);
        return i < nbase ? &base[i] : NULL;
    }
    if (!is_uuid(s))
        return NULL;
    const struct entry *found = NULL;
    for (int i = 0; i < nbase; i++) {
        if (!is_uuid(&base[i]) || !uuid_agrees(s, &base[i]))
            continue;
        if (found != NULL)
            return NULL; /* ambiguous */
        found = &base[i];
    }
    return found;
}

char *gvs_devices_compose(const char *base, const char *sel)
{
    struct entry b[GVS_DEVICES_MAX], s[GVS_DEVICES_MAX];
    if (base == NULL)
        return gvs_strdup(sel);
    int nb = split(base, b), ns = split(sel, s);
    /* CUDA reads base up to its first entry that is neither form. */
    for (int i = 0; i < nb; i++)
        if (!is_ordinal(&b[i]) && !is_uuid(&b[i]))
            nb = i;
    /* Each entry written is one of base's or sel's, plus its comma. */
    char *out = gvs_malloc((size_t)ns * (strlen(base) + strlen(sel) + 1) + 1);
    if (out == NULL)
        return NULL;
    size_t len = 0;
    for (int i = 0; i < ns; i++) {
        const struct entry *p = pick(&s[i], b, nb);
        if (p == NULL)
            break;
        /* The more specific of two agreeing UUIDs names the device. */
        const struct entry *w = is_uuid(&s[i]) && s[i].n > p->n ? &s[i] : p;
        if (len > 0)
            out[len++] = ',';
        memcpy(out + len, w->p, w->n);
        len += w->n;
    }
    out[len] = '\0';
    return out;
}

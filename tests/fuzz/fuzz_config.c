/*
 * fuzz_config: the configuration parser (core/config.c and
 * core/config_access.c) on arbitrary text, as gvsd and the frontend read
 * a file: gvs_config_parse is handed the bytes and their length, with no
 * NUL after them.
 *
 * The text is parsed twice into one config, as a second file on top of a
 * first, so that repeatable keys reach their limits and later scalars
 * replace earlier ones.  Checked: the result is 0 or GVS_E_CONFIG /
 * GVS_E_NOMEM; a refusal's reason is a NUL-terminated "line N: ..."
 * within the error buffer; the counts of repeatable keys stay within
 * their arrays; gvs_config_free releases everything (LeakSanitizer).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gvs/config.h"
#include "gvs/err.h"

#define ERR_LEN 128

static void check(const struct gvs_config *c, int r, const char *err)
{
    if (r != 0 && r != GVS_E_CONFIG && r != GVS_E_NOMEM)
        abort();
    if (r == GVS_E_CONFIG &&
        (memchr(err, '\0', ERR_LEN) == NULL || strncmp(err, "line ", 5) != 0))
        abort();
    if (c->nlisten < 0 || c->nlisten > GVS_CONFIG_MAX_LISTEN ||
        c->nplugins < 0 || c->nplugins > GVS_CONFIG_MAX_PLUGINS ||
        c->ntokens < 0 || c->ntokens > GVS_CONFIG_MAX_TOKENS ||
        c->nallow_uid < 0 || c->nallow_uid > GVS_CONFIG_MAX_IDS ||
        c->nallow_gid < 0 || c->nallow_gid > GVS_CONFIG_MAX_IDS)
        abort();
    for (int i = 0; i < c->ntokens; i++) {
        size_t n = strlen(c->tokens[i].secret);
        if (n < GVS_TOKEN_MIN_LEN || n > GVS_TOKEN_MAX_LEN)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[ERR_LEN];
    struct gvs_config c;
    gvs_config_init(&c);
    for (int pass = 0; pass < 2; pass++) {
        memset(err, 'x', sizeof(err));
        /* libFuzzer's copy of the input is exactly size bytes: ASan sees
         * any read past the text's end. */
        int r = gvs_config_parse(&c, (const char *)data, size, err,
                                 sizeof(err));
        check(&c, r, err);
    }
    gvs_config_free(&c);
    return 0;
}

#include <stdlib.h>

#include "gvs/devices.h"
#include "gvs/err.h"
#include "gvs/mem.h"
#include "test.h"

TEST_IMPL(devices_check)
{
    static const char *const good[] = {
        "0", "0,2", "13,0,1", "GPU-cda08e98", "GPU-cda08e98-c90f-f967",
        "MIG-1234-abcd", "1,GPU-ab,0",
    };
    static const char *const bad[] = {
        "", ",", "0,", ",0", "0,,1", " 0", "0 ", "-1", "junk", "GPU-",
        "GPU-xyz", "gpu-12", "1234567890", "0;1",
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        if (gvs_devices_check(good[i]) != 0)
            TEST_FAIL_AT("refused \"%s\"", good[i]);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (gvs_devices_check(bad[i]) != GVS_E_INVAL)
            TEST_FAIL_AT("accepted \"%s\"", bad[i]);
    ASSERT_EQ(gvs_devices_check(NULL), GVS_E_INVAL);
    /* GVS_DEVICES_MAX entries, and one more. */
    char list[4 * GVS_DEVICES_MAX + 8] = "";
    for (int i = 0; i < GVS_DEVICES_MAX; i++)
        strcat(list, i ? ",1" : "1");
    ASSERT_EQ(gvs_devices_check(list), 0);
    strcat(list, ",1");
    ASSERT_EQ(gvs_devices_check(list), GVS_E_INVAL);
    return 0;
}

static int composes(const char *base, const char *sel, const char *want)
{
    char *got = gvs_devices_compose(base, sel);
    int ok = got != NULL && strcmp(got, want) == 0;
    if (!ok)
        fprintf(stderr, "compose(%s, %s) = \"%s\", not \"%s\"\n",
                base ? base : "NULL", sel, got ? got : "(null)", want);
    gvs_free(got);
    return ok;
}

TEST_IMPL(devices_compose)
{
    /* Without a list in force, CUDA reads the client's as it is. */
    ASSERT(composes(NULL, "1,junk,0", "1,junk,0"));
    ASSERT(composes(NULL, "", ""));
    /* Ordinals index the list in force, in the order asked. */
    ASSERT(composes("0,2", "1", "2"));
    ASSERT(composes("0,2", "1,0", "2,0"));
    ASSERT(composes("3,1,2", "2,2", "2,2"));
    /* The first entry that names nothing ends the list. */
    ASSERT(composes("0,2", "2", ""));
    ASSERT(composes("0,2", "1,5,0", "2"));
    ASSERT(composes("0,2", "x,0", ""));
    ASSERT(composes("0,2", "", ""));
    /* CUDA itself reads the list in force up to its first bad entry. */
    ASSERT(composes("0,junk,2", "1", ""));
    /* UUIDs pick the UUID entry they agree with, the longer one kept. */
    ASSERT(composes("GPU-aaaa1111,GPU-bbbb2222", "GPU-bbbb", "GPU-bbbb2222"));
    ASSERT(composes("GPU-aaaa", "GPU-AAAA1111-22", "GPU-AAAA1111-22"));
    ASSERT(composes("GPU-aaaa1111,1", "0,1", "GPU-aaaa1111,1"));
    /* No agreement, an ambiguous prefix, or an ordinal entry in force:
     * a UUID picks nothing. */
    ASSERT(composes("GPU-aaaa1111", "GPU-bbbb", ""));
    ASSERT(composes("GPU-aa11,GPU-aa22", "GPU-aa", ""));
    ASSERT(composes("0,1", "GPU-aaaa", ""));
    ASSERT(composes("0,1", "1,GPU-aaaa,0", "1"));
    return 0;
}

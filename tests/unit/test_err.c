#include "gvs/err.h"
#include "test.h"

TEST_IMPL(err_names)
{
    ASSERT_STR_EQ(gvs_errname(GVS_E_NOMEM), "NOMEM");
    ASSERT_STR_EQ(gvs_strerror(GVS_E_TRAILING), "trailing bytes after message");
    ASSERT_STR_EQ(gvs_errname(0), "OK");
    ASSERT_STR_EQ(gvs_errname(-999), "UNKNOWN");
    ASSERT_STR_EQ(gvs_strerror(12345), "unknown gvs error");
    return 0;
}

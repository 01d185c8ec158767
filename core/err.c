#include "gvs/err.h"

const char *gvs_strerror(int err)
{
    switch (err) {
    case 0:
        return "success";
#define GVS_ERR_MSG(name, value, msg)                                        \
    case GVS_E_##name:                                                       \
        return msg;
        GVS_ERRNO_MAP(GVS_ERR_MSG)
#undef GVS_ERR_MSG
    }
    return "unknown gvs error";
}

const char *gvs_errname(int err)
{
    switch (err) {
    case 0:
        return "OK";
#define GVS_ERR_NAME(name, value, msg)                                       \
    case GVS_E_##name:                                                       \
        return #name;
        GVS_ERRNO_MAP(GVS_ERR_NAME)
#undef GVS_ERR_NAME
    }
    return "UNKNOWN";
}

#include "devices.h"

#include <stdlib.h>

#include "gvs/devices.h"
#include "gvs/err.h"
#include "gvs/log.h"
#include "gvs/mem.h"

int gvsd_devices_apply(const char *devices)
{
    if (devices == NULL)
        return 0;
    const char *inherited = getenv("CUDA_VISIBLE_DEVICES");
    char *list = gvs_devices_compose(inherited, devices);
    if (list == NULL || setenv("CUDA_VISIBLE_DEVICES", list, 1) != 0) {
        gvs_free(list);
        gvs_error("cannot set CUDA_VISIBLE_DEVICES for devices %s", devices);
        return GVS_E_NOMEM;
    }
    gvs_info("sessions see devices %s (CUDA_VISIBLE_DEVICES=%s)", devices,
             list);
    gvs_free(list);
    return 0;
}

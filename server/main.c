#include "daemon.h"
#include "devices.h"
#include "gvs/log.h"
#include "gvs/tls.h"
#include "options.h"

int main(int argc, char **argv)
{
    struct gvsd_options o;
    int rc = gvsd_options_parse(&o, argc, argv);
    int status = rc == GVSD_OPTIONS_EXIT ? 0 : 2;
    if (rc == 0) {
        gvs_log_setup("gvsd", o.log_level);
        struct gvs_tls_files tls = {o.cfg.tls_ca, o.cfg.tls_cert,
                                    o.cfg.tls_key};
        status = gvsd_devices_apply(o.cfg.devices) == 0 &&
                         gvs_tls_configure(&tls) == 0
                     ? gvsd_run(&o.cfg, o.ready_fd)
                     : 2;
    }
    gvsd_options_free(&o);
    return status;
}

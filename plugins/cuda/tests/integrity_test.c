/*
 * cuda.integrity: cuda_fe_integrity, given the inputs the probe recorded
 * from NVIDIA's driver (INTEGRITY_TXT, probe/README.md "integrity.txt":
 * its table and function addresses, pid, thread, version, time and
 * devices), answers what the driver answered, for every version recorded.
 * Only the `init` phase counts: before cuInit the driver answers nothing.
 *
 * usage: integrity_test INTEGRITY_TXT
 */
#include "exports.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVICES 64

struct run {
    struct cuda_fe_integrity_in in;
    struct cuda_fe_integrity_dev dev[MAX_DEVICES];
    int device;  /* the one the device lines are about */
    int call_rc;
    uint64_t driver[2];
};

static int hex_bytes(const char *hex, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (sscanf(hex + 2 * i, "%2" SCNx8, &out[i]) != 1)
            return -1;
    return hex[2 * n] == '\0' || hex[2 * n] == '\n' ? 0 : -1;
}

/* One `init` line into r; 0, or -1 for a line it cannot read. */
static int parse(const char *line, struct run *r)
{
    uint64_t a, b;
    unsigned u;
    int i, x, y, z;
    char hex[64];
    if (sscanf(line, "init call rc=%d out %" SCNx64 " %" SCNx64, &r->call_rc, &a, &b) == 3) {
        r->driver[0] = a;
        r->driver[1] = b;
    } else if (sscanf(line, "init input driver_version %u", &u) == 1) {
        r->in.driver_version = u;
    } else if (sscanf(line, "init input version %u", &u) == 1) {
        r->in.version = u;
    } else if (sscanf(line, "init input pid %u", &u) == 1) {
        r->in.pid = u;
    } else if (sscanf(line, "init input tid_pthread_low32 %x", &u) == 1) {
        r->in.thread = u;
    } else if (sscanf(line, "init input cudart_interface_table %" SCNx64, &a) == 1) {
        r->in.cudart_table = a;
    } else if (sscanf(line, "init input integrity_check_table %" SCNx64, &a) == 1) {
        r->in.integrity_table = a;
    } else if (sscanf(line, "init input integrity_check_fn %" SCNx64, &a) == 1) {
        r->in.integrity_fn = a;
    } else if (sscanf(line, "init input unix_seconds %" SCNu64, &a) == 1) {
        r->in.unix_seconds = a;
    } else if (sscanf(line, "init input devices %d", &i) == 1) {
        if (i < 0 || i > MAX_DEVICES)
            return -1;
        r->in.ndevices = i;
    } else if (sscanf(line, "init device %d pci %d %d %d", &i, &x, &y, &z) == 4) {
        if (i < 0 || i >= MAX_DEVICES)
            return -1;
        r->device = i;
        r->dev[i].pci_domain = x;
        r->dev[i].pci_bus = y;
        r->dev[i].pci_device = z;
    } else if (sscanf(line, "init device_uuid_v2 %63s", hex) == 1) {
        /* A device's UUID follows its pci line. */
        return hex_bytes(hex, r->dev[r->device].uuid, 16);
    }
    return 0;
}

static int check(const struct run *r)
{
    uint64_t got[2];
    cuda_fe_integrity(&r->in, got);
    int ok = got[0] == r->driver[0] && got[1] == r->driver[1];
    printf("integrity %u: gvs 0x%016" PRIx64 " 0x%016" PRIx64 " %s driver\n",
           r->in.version, got[0], got[1], ok ? "==" : "!=");
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s INTEGRITY_TXT\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (f == NULL) {
        perror(argv[1]);
        return 2;
    }
    static struct run r;
    int in_run = 0, runs = 0, bad = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        /* A run ends with the rc legend that follows its phases. */
        if (strncmp(line, "probe integrity ", 16) == 0) {
            memset(&r, 0, sizeof r);
            r.call_rc = -1;
            r.in.devices = r.dev;
            in_run = 1;
        } else if (in_run && strncmp(line, "rc ", 3) == 0) {
            if (r.call_rc == 0) {
                runs++;
                bad += !check(&r);
            }
            in_run = 0;
        } else if (in_run && strncmp(line, "init ", 5) == 0 && parse(line, &r) != 0) {
            printf("FAIL %s: cannot read: %s", argv[1], line);
            bad++;
        }
    }
    fclose(f);
    if (runs < 3) {
        printf("FAIL %s: %d answered runs, expected 13000, 13001 and 13002\n",
               argv[1], runs);
        return 1;
    }
    return bad ? 1 : 0;
}

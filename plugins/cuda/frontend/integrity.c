/*
 * The integrity check's digest (exports.h), apart from the table that
 * answers it so that it can be checked against inputs recorded from
 * NVIDIA's driver (plugins/cuda/tests/integrity_test.c) and against the
 * driver itself (integrity_gpu.c).
 */
#include "exports.h"
#include "md2.h"

#include <string.h>

/* The driver's key and its answers for version % 10 == 0 and 1. */
static const uint8_t key[16] = {0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9,
                                0xa7, 0x52, 0xaa, 0x08, 0x41, 0x36,
                                0x0b, 0xf5, 0x5a, 0x9f};
static const uint64_t constant[2][2] = {
    {0x3341181c03cb675cull, 0x8ed383aa1f4cd1e8ull},
    {0x1841181c03cb675cull, 0x8ed383aa1f4cd1e8ull},
};

/* The record is native-endian, packed, as the driver lays it out. */
#define PUT(p, off, v) memcpy((p) + (off), &(v), sizeof(v))

void cuda_fe_integrity(const struct cuda_fe_integrity_in *in, uint64_t out[2])
{
    if (in->version % 10 <= 1) {
        memcpy(out, constant[in->version % 10], sizeof constant[0]);
        return;
    }
    uint8_t rec[48];
    PUT(rec, 0, in->driver_version);
    PUT(rec, 4, in->version);
    PUT(rec, 8, in->pid);
    PUT(rec, 12, in->thread);
    PUT(rec, 16, in->cudart_table);
    PUT(rec, 24, in->integrity_table);
    PUT(rec, 32, in->integrity_fn);
    PUT(rec, 40, in->unix_seconds);

    struct gvs_hmac_md2_ctx h;
    gvs_hmac_md2_init(&h, key, sizeof key);
    gvs_hmac_md2_update(&h, rec, sizeof rec);
    for (int i = 0; i < in->ndevices; i++) {
        const struct cuda_fe_integrity_dev *d = &in->devices[i];
        uint8_t dev[28];
        memcpy(dev, d->uuid, sizeof d->uuid);
        PUT(dev, 16, d->pci_domain);
        PUT(dev, 20, d->pci_bus);
        PUT(dev, 24, d->pci_device);
        gvs_hmac_md2_update(&h, dev, sizeof dev);
    }
    uint8_t digest[GVS_MD2_DIGEST_SIZE];
    gvs_hmac_md2_final(&h, digest);
    memcpy(out, digest, sizeof digest);
}

/*
 * nvmlInternalGetExportTable: NVML's private tables.  NVIDIA's nvidia-smi
 * asks for C4FE3E6C before it uses NVML and stops with "Mismatch in
 * versions between nvidia-smi and NVML" without it (seen with
 * tools/probe/api_trace.c, plugins/nvml/probe).  The table has the size
 * NVIDIA's NVML of driver 580.159.04 gives it (0x870 bytes: its size
 * word, two NULL slots, then functions).  nvidia-smi's listing and
 * queries call two of them (arguments as seen on that driver): [26]
 * hands NVML each line it prints, for NVML's debug log, which gvs does
 * not keep; [81] asks a device's PCI address by index.  Its table view
 * calls five more: [31] whether a display is active, [108] the power
 * limit, [213], [214] and [215] the compute, graphics and MPS processes,
 * in entries 4128 bytes apart (the stride of the buffers nvidia-smi
 * passes) that begin as nvmlProcessInfo_t.  Every other slot
 * is a stub that fails with NVML_ERROR_NOT_SUPPORTED and says once on
 * stderr which slot was asked.  Any other table: like NVIDIA's library
 * for a table it does not have, none.
 */
#include "fe.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "nvml_wire.h"

#define C4FE_SLOTS 270

static atomic_flag logged[C4FE_SLOTS];

static nvmlReturn_t stub(int slot)
{
    if (!atomic_flag_test_and_set(&logged[slot]))
        fprintf(stderr, "gvs: NVML export table C4FE3E6C slot %d is not supported yet\n",
                slot);
    return NVML_ERROR_NOT_SUPPORTED;
}

/* [26] (format, stream name, text, a function of nvidia-smi's). */
static nvmlReturn_t print_logged(const char *format, const char *stream, const char *text,
                                 void *fn)
{
    (void)format, (void)stream, (void)text, (void)fn;
    return NVML_SUCCESS;
}

/* [81] (index, buffer, its size): "dddd:bb:dd.f", as NVIDIA's writes it. */
static nvmlReturn_t pci_address(unsigned int index, char *buf, unsigned int len)
{
    nvmlDevice_t d;
    nvmlPciInfo_t pci;
    if (buf == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t r = nvmlDeviceGetHandleByIndex_v2(index, &d);
    if (r == NVML_SUCCESS)
        r = nvmlDeviceGetPciInfo_v3(d, &pci);
    if (r != NVML_SUCCESS)
        return r;
    int n = snprintf(buf, len, "%04x:%02x:%02x.0", pci.domain, pci.bus, pci.device);
    return n >= 0 && (unsigned int)n < len ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
}

/* [31] (device, out): "Disp.A" of the table view. */
static nvmlReturn_t display_active(nvmlDevice_t device, nvmlEnableState_t *active)
{
    return nvmlDeviceGetDisplayActive(device, active);
}

/* [108] (device, out milliwatts): "Cap" of the table view. */
static nvmlReturn_t power_limit(nvmlDevice_t device, unsigned int *limit)
{
    return nvmlDeviceGetEnforcedPowerLimit(device, limit);
}

#define SMI_PROCESS_STRIDE 4128

/* [213], [214], [215] (device, count in room out, entries). */
static nvmlReturn_t compute_processes(nvmlDevice_t device, unsigned int *count, void *infos)
{
    return nvml_fe_process_list(device, NVML_PROC_COMPUTE, count, infos, 3,
                                SMI_PROCESS_STRIDE);
}

static nvmlReturn_t graphics_processes(nvmlDevice_t device, unsigned int *count, void *infos)
{
    return nvml_fe_process_list(device, NVML_PROC_GRAPHICS, count, infos, 3,
                                SMI_PROCESS_STRIDE);
}

static nvmlReturn_t mps_processes(nvmlDevice_t device, unsigned int *count, void *infos)
{
    return nvml_fe_process_list(device, NVML_PROC_MPS, count, infos, 3,
                                SMI_PROCESS_STRIDE);
}

/* One stub per slot, 3 to 269, so that the log names the slot asked. */
#define S(i) static nvmlReturn_t slot_##i(void) { return stub(i); }
#define S10(t) S(t##0) S(t##1) S(t##2) S(t##3) S(t##4) S(t##5) S(t##6) S(t##7) \
    S(t##8) S(t##9)
S(3) S(4) S(5) S(6) S(7) S(8) S(9)
S10(1) S10(2) S10(3) S10(4) S10(5) S10(6) S10(7) S10(8) S10(9) S10(10) S10(11)
S10(12) S10(13) S10(14) S10(15) S10(16) S10(17) S10(18) S10(19) S10(20) S10(21)
S10(22) S10(23) S10(24) S10(25) S10(26)

typedef void (*slot_fn)(void);
union slot {
    size_t size;
    slot_fn fn;
};

#define F(i) {.fn = (slot_fn)slot_##i},
#define F10(t) F(t##0) F(t##1) F(t##2) F(t##3) F(t##4) F(t##5) F(t##6) F(t##7) \
    F(t##8) F(t##9)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
static const union slot table_c4fe[C4FE_SLOTS] = {
    {.size = sizeof(union slot) * C4FE_SLOTS}, {.fn = NULL}, {.fn = NULL},
    F(3) F(4) F(5) F(6) F(7) F(8) F(9)
    F10(1) F10(2) F10(3) F10(4) F10(5) F10(6) F10(7) F10(8) F10(9) F10(10) F10(11)
    F10(12) F10(13) F10(14) F10(15) F10(16) F10(17) F10(18) F10(19) F10(20) F10(21)
    F10(22) F10(23) F10(24) F10(25) F10(26)
    [26] = {.fn = (slot_fn)print_logged}, [31] = {.fn = (slot_fn)display_active},
    [81] = {.fn = (slot_fn)pci_address}, [108] = {.fn = (slot_fn)power_limit},
    [213] = {.fn = (slot_fn)compute_processes}, [214] = {.fn = (slot_fn)graphics_processes},
    [215] = {.fn = (slot_fn)mps_processes},
};
#pragma GCC diagnostic pop

static const unsigned char uuid_c4fe[16] = {0xc4, 0xfe, 0x3e, 0x6c, 0xc9, 0x8f,
                                            0x6c, 0x4e, 0xa3, 0x27, 0xee, 0x69,
                                            0x6e, 0x12, 0xf7, 0xc4};

nvmlReturn_t nvmlInternalGetExportTable(const void **ppExportTable,
                                        const void *pExportTableId)
{
    if (ppExportTable == NULL || pExportTableId == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *ppExportTable = NULL;
    if (memcmp(pExportTableId, uuid_c4fe, sizeof(uuid_c4fe)) != 0)
        return NVML_ERROR_FUNCTION_NOT_FOUND;
    *ppExportTable = table_c4fe;
    return NVML_SUCCESS;
}

/*
 * What both halves of the NVML plugin agree on beyond nvml.api: the
 * selectors and bounds of its hand-written ops (nvml.api says their wire
 * forms).
 */
#ifndef GVS_NVML_WIRE_H
#define GVS_NVML_WIRE_H

/* SYSTEM_STRING and DEVICE_STRING: which string. */
enum nvml_string {
    NVML_STR_DRIVER_VERSION, /* nvmlSystemGetDriverVersion */
    NVML_STR_NVML_VERSION,   /* nvmlSystemGetNVMLVersion */
    NVML_STR_SYSTEM_COUNT,
    NVML_STR_NAME = 0, /* nvmlDeviceGetName */
    NVML_STR_UUID,     /* nvmlDeviceGetUUID */
    NVML_STR_SERIAL,   /* nvmlDeviceGetSerial */
    NVML_STR_BOARD_PART_NUMBER,
    NVML_STR_VBIOS_VERSION,
    NVML_STR_DEVICE_COUNT
};

/* The longest string either op carries (NUL excluded): NVML's own
 * buffers are at most 96 bytes. */
#define NVML_STRING_MAX 255u

/* DEVICE_PROCESSES: which list. */
enum nvml_process_kind {
    NVML_PROC_COMPUTE,
    NVML_PROC_GRAPHICS,
    NVML_PROC_MPS,
    NVML_PROC_KINDS
};

/* The most processes of one session a list holds: the worker is one
 * process, on a GPU once per list. */
#define NVML_PROCESSES_MAX 16u

/* The most field values one DEVICE_FIELD_VALUES asks. */
#define NVML_FIELD_VALUES_MAX 256u

/* The most GPUs a session sees (the layer's per-GPU accounting). */
#define NVML_DEVICES_MAX 64u

#endif

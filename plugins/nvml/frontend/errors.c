/* nvmlErrorString, answered locally from NVIDIA's strings (errstr.inc). */
#include "fe.h"

const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
#define NVML_ERRSTR(code, text)                                              \
    case code:                                                               \
        return text;
#include "errstr.inc"
#undef NVML_ERRSTR
    }
    return "Unknown Error";
}

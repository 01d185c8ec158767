// rdc.cu built for an older architecture only (rdc_jit.cmake): the
// device-linked image holds no code this GPU runs, so CUDA links the
// translation units' own images, compiling their PTX.
#include "rdc.cu"

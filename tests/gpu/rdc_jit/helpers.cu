// rdc/helpers.cu, in rdc_jit's own build.
#include "../rdc/helpers.cu"

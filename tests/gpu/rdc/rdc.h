// Defined in rdc/helpers.cu, used by rdc.cu: device code linked across
// translation units.
#pragma once

extern __device__ int factor;
extern __device__ int calls;
__device__ int transform(int x);
void launch_offset(int *v, int n, int by);

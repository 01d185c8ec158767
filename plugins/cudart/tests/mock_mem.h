/* Between the mock files (cudart.mock_graphs): copies and memsets that
 * graph nodes run too. */
#ifndef CUDART_MOCK_MEM_H
#define CUDART_MOCK_MEM_H

#include <cuda_runtime_api.h>

#include "mock_streams.h"

/* mock_mem3d.c: a cudaMemcpy3D of arrays and pitched memory, run now. */
cudaError_t mock_copy3d(const struct cudaMemcpy3DParms *p);

#endif

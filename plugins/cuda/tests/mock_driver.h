/* The mock driver's parts (mock_driver.c), which fill cuda_be_drv. */
#ifndef CUDA_MOCK_DRIVER_H
#define CUDA_MOCK_DRIVER_H

/* mock_arrays.c: arrays, mipmapped arrays, 3D copies, texture and
 * surface objects. */
void mock_arrays_fill(void);

#endif

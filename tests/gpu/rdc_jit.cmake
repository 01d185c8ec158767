# Relocatable device code for sm_75 only (SASS and PTX): on the Hopper
# GPUs the tests run on, the device-linked image cannot load and the units
# are linked again from their PTX at load time.
set_target_properties(${gvs_target} PROPERTIES CUDA_SEPARABLE_COMPILATION ON
                      CUDA_ARCHITECTURES 75)

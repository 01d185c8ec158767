# The 1D array copies are deprecated, and tested here on purpose.
target_compile_definitions(${gvs_target} PRIVATE CUDA_ENABLE_DEPRECATED)

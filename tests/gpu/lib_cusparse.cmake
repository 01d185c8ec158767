# cuSPARSE, a shared library with NVIDIA's runtime inside.
target_link_libraries(${gvs_target} PRIVATE CUDA::cusparse)

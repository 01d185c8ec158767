# cuBLAS and cuBLASLt, shared libraries with NVIDIA's runtime inside.
target_link_libraries(${gvs_target} PRIVATE CUDA::cublas CUDA::cublasLt)

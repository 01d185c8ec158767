# cuSOLVER (and the cuBLAS it uses), shared libraries with NVIDIA's
# runtime inside.
target_link_libraries(${gvs_target} PRIVATE CUDA::cusolver CUDA::cublas)

# NVRTC compiles the program's kernels on the client.
target_link_libraries(${gvs_target} PRIVATE CUDA::nvrtc)

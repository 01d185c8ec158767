# Relocatable device code, device-linked: nvcc registers one linked fat
# binary for the whole program through __cudaRegisterLinkedBinary_*.
set_target_properties(${gvs_target} PROPERTIES CUDA_SEPARABLE_COMPILATION ON)

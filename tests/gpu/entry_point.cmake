# cudaGetDriverEntryPoint is deprecated, and tested here on purpose; the
# driver's own cuGetProcAddress_v2 is found with dlopen (driver_api.h).
target_compile_definitions(${gvs_target} PRIVATE CUDA_ENABLE_DEPRECATED)
target_link_libraries(${gvs_target} PRIVATE ${CMAKE_DL_LIBS})

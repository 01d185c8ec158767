# The library image: library_image/kernels.cu as a fat binary for the
# tests' architectures (GVS_CUDA_ARCH_FLAGS), in the build tree; the
# program reads its path from LIBRARY_IMAGE.
set(library_api_image ${CMAKE_BINARY_DIR}/tests/gpu/library_api.fatbin)
if(NOT gvs_static)
  add_custom_command(
    OUTPUT ${library_api_image}
    COMMAND ${CMAKE_CUDA_COMPILER} -fatbin ${GVS_CUDA_ARCH_FLAGS}
            -o ${library_api_image}
            ${CMAKE_CURRENT_SOURCE_DIR}/library_image/kernels.cu
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/library_image/kernels.cu
    COMMENT "Building the library_api image")
  add_custom_target(library_api_image DEPENDS ${library_api_image})
endif()
add_dependencies(${gvs_target} library_api_image)
target_compile_definitions(${gvs_target} PRIVATE
  LIBRARY_IMAGE="${library_api_image}")

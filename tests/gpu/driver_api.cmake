# The modules driver_api loads: driver_image/kernels.cu as nvcc's fat
# binary, cubin and PTX files (gvs_driver_images, CMakeLists.txt).
gvs_driver_images(${gvs_target} driver_api
                  ${CMAKE_CURRENT_SOURCE_DIR}/driver_image/kernels.cu)

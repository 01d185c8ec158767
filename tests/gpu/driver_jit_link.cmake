# The inputs driver_jit_link links: the units of driver_link/ as
# relocatable device code (-rdc), as PTX and cubin files
# (gvs_driver_images, CMakeLists.txt).
gvs_driver_images(${gvs_target} driver_link_kernel
                  ${CMAKE_CURRENT_SOURCE_DIR}/driver_link/kernel.cu -rdc=true)
gvs_driver_images(${gvs_target} driver_link_helpers
                  ${CMAKE_CURRENT_SOURCE_DIR}/driver_link/helpers.cu -rdc=true)

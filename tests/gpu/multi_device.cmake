# Also against a gvsd limited to its first device (--devices 0), compared
# with a native run limited the same way by CUDA_VISIBLE_DEVICES.
if(NOT gvs_static)
  add_test(NAME gpu.multi_device.subset
           COMMAND ${compare} --mode gpu --transport tcp --gvsd-arg=--devices=0
                   --native-env CUDA_VISIBLE_DEVICES=0 -- $<TARGET_FILE:multi_device>)
  set_tests_properties(gpu.multi_device.subset PROPERTIES LABELS gpu TIMEOUT 600)
endif()

# Included by tests/gpu/CMakeLists.txt: the security tests
# (docs/security-quota.md), label gpu.  Each is a CUDA program NAME.cu
# (target security_NAME) and its driver NAME.py, which starts a private
# gvsd and runs clients of it:
#   gpu.security.quota       --memory-quota: what a session may hold and see
#   gpu.security.reclaim     a SIGKILLed client's memory comes back
#   gpu.security.fault       a kernel fault stays in its session
#   gpu.security.gvsd_death  clients of a dead gvsd fail fast; a new one serves
set(GVS_SECURITY_DIR ${CMAKE_CURRENT_LIST_DIR})
foreach(t quota reclaim fault gvsd_death)
  add_executable(security_${t} ${GVS_SECURITY_DIR}/${t}.cu)
  set_target_properties(security_${t} PROPERTIES
    OUTPUT_NAME ${t}
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/gpu/security)
  add_dependencies(security_${t} gvsd cudart_frontend cudart_backend)
  add_test(NAME gpu.security.${t}
    COMMAND ${Python3_EXECUTABLE} ${GVS_SECURITY_DIR}/${t}.py
            --gvsd $<TARGET_FILE:gvsd> --frontend ${GVS_FRONTEND_DIR}
            --program $<TARGET_FILE:security_${t}>)
  # Alone: reclaim and quota read the GPU's free memory, which programs
  # run beside them (ctest -j) would move.
  set_tests_properties(gpu.security.${t} PROPERTIES LABELS gpu TIMEOUT 300
                       RUN_SERIAL ON)
endforeach()

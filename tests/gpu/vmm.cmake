# The driver is opened with dlopen (vmm.cu says why), never linked.
target_link_libraries(${gvs_target} PRIVATE ${CMAKE_DL_LIBS})

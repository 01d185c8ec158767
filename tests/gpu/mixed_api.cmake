# The driver's functions are found with dlopen (driver_api.h); a second
# thread checks a new thread's context.
target_link_libraries(${gvs_target} PRIVATE ${CMAKE_DL_LIBS} -pthread)

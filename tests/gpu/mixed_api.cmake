# The driver's functions are found with dlopen (driver_api.h).
target_link_libraries(${gvs_target} PRIVATE ${CMAKE_DL_LIBS})

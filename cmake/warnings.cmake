# Warnings and sanitizers live on INTERFACE targets that every meshperf target links,
# never in CMAKE_CXX_FLAGS.
add_library(meshperf_warnings INTERFACE)
target_compile_options(meshperf_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor
  -Wno-missing-field-initializers>)

add_library(meshperf_sanitize INTERFACE)
if(MESHPERF_SANITIZE)
  list(JOIN MESHPERF_SANITIZE "," _san)
  target_compile_options(meshperf_sanitize INTERFACE -fsanitize=${_san} -fno-omit-frame-pointer)
  target_link_options(meshperf_sanitize INTERFACE -fsanitize=${_san})
endif()

add_library(meshperf_defaults INTERFACE)
target_link_libraries(meshperf_defaults INTERFACE meshperf_warnings meshperf_sanitize)
target_include_directories(meshperf_defaults INTERFACE ${PROJECT_SOURCE_DIR})

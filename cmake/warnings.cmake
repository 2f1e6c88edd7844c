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
  # Boost assertions stay on (no NDEBUG) through a handler that tolerates the one assertion
  # known to be wrong in Boost 1.81 (see the file); every program compiles it in, once (in a
  # library's unity batch it would clash with the program's own copy).
  target_compile_definitions(meshperf_sanitize INTERFACE BOOST_ENABLE_ASSERT_HANDLER)
  target_sources(meshperf_sanitize INTERFACE
    $<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:${PROJECT_SOURCE_DIR}/tests/sanitizers/boost_assert_handler.cpp>)
  # clang < 17: UBSan's "function" check (in "undefined") breaks the build of coroutines,
  # e.g. daemon/api/http_server.cpp: "Cannot represent a difference across sections"
  # (llvm/llvm-project#49689). Every other UBSan check stays on.
  if("undefined" IN_LIST MESHPERF_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 17)
    target_compile_options(meshperf_sanitize INTERFACE -fno-sanitize=function)
  endif()
endif()

# MESHPERF_FUZZ: libFuzzer's coverage instrumentation on every meshperf target, so the fuzz
# targets (tests/fuzz) are guided by the library code they reach too. Binaries that are not
# fuzz targets still link and run: the sanitizer runtimes define the coverage callbacks.
if(MESHPERF_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "MESHPERF_FUZZ=ON needs clang: cmake -DCMAKE_CXX_COMPILER=clang++-14 (or run tests/fuzz/run-fuzzers)")
  endif()
  if(NOT MESHPERF_SANITIZE)
    message(FATAL_ERROR "MESHPERF_FUZZ=ON needs MESHPERF_SANITIZE=address;undefined (fuzzing without sanitizers finds little)")
  endif()
  target_compile_options(meshperf_sanitize INTERFACE -fsanitize=fuzzer-no-link)
endif()

add_library(meshperf_defaults INTERFACE)
target_link_libraries(meshperf_defaults INTERFACE meshperf_warnings meshperf_sanitize)
target_include_directories(meshperf_defaults INTERFACE ${PROJECT_SOURCE_DIR})
# __FILE__ relative to the source root ("tests/unit/core/sizes_test.cpp"): the unity sources
# include each file by its absolute path, so every doctest assertion's __FILE__ (and, without
# NDEBUG, every assert()'s) put the checkout's path into the preprocessed source, and a clean
# clone in another folder missed ccache on each such batch. ccache does not hash the map's
# argument; debug info is not remapped (scripts/ccache-env).
target_compile_options(meshperf_defaults INTERFACE $<$<COMPILE_LANGUAGE:C,CXX>:-fmacro-prefix-map=${PROJECT_SOURCE_DIR}/=>)

# How an exercise tree is built. A tree is a folder laid out like exercises/ (01_rectangular/,
# 02_swizzle/, 03_inplace/) holding the reader's files: exercises/ itself (the skeletons),
# solutions/ (the reference answers), or the grader's staged copy of a submission. The tests,
# the API headers (exNN.cuh) and the course's helper sources always come from exercises/.
#
# For each exercise NN of a tree named <tree>, this builds:
#   exNN_<tree>        an OBJECT library with the reader's translation units only, so that the
#                      grader can inspect exactly those objects (nm) and nothing else;
#   test_exNN_<tree>   the GoogleTest binary: the course's test file (compiled once, as the
#                      OBJECT library exNN_tests, for every tree) + those objects;
#   bench_exNN_<tree>  the same objects timed like a step: the copy ceiling, then the kernel.
# Options: REGISTER adds the tests to CTest (labels cpu / gpu by name, as for the steps).
# With -DCOURSE_HIDDEN_TESTS=<dir>, every <dir>/<exercise folder>/*.cu becomes
# test_exNN_hidden_<tree>, built against the same objects (never registered: the grader runs it).

# _exercise_add(<tree> <tree dir> <register> <NN> <folder> <test file> <bench file>
#               SOURCES <files...>)
#   Files in SOURCES are relative to the tree's exercise folder, except those starting with
#   "course:", which are relative to the course's exercise folder (helpers the reader never edits).
function(_exercise_add tree dir register nn folder test_file bench_file)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  set(course_dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${folder})
  set(reader_dir ${dir}/${folder})
  set(sources "")
  foreach(src IN LISTS ARG_SOURCES)
    if(src MATCHES "^course:(.*)$")
      list(APPEND sources ${course_dir}/${CMAKE_MATCH_1})
    else()
      list(APPEND sources ${reader_dir}/${src})
    endif()
  endforeach()

  set(objects ex${nn}_${tree})
  add_library(${objects} OBJECT ${sources})
  # The reader's folder first: "swizzle.cuh" is the tree's own; exNN.cuh is the course's.
  target_include_directories(${objects} PRIVATE ${reader_dir} ${course_dir})
  # Where the grader finds those objects (one path per line).
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/exercises/${objects}.objects
       CONTENT "$<JOIN:$<TARGET_OBJECTS:${objects}>,\n>\n")

  # The test file never sees the reader's folder, so one object serves every tree.
  set(tests ex${nn}_tests)
  if(NOT TARGET ${tests})
    add_library(${tests} OBJECT ${course_dir}/tests/${test_file})
    target_link_libraries(${tests} PRIVATE transpose_testing)
    target_include_directories(${tests} PRIVATE ${course_dir}
                                                ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/testing)
  endif()
  set(test test_ex${nn}_${tree})
  add_executable(${test} $<TARGET_OBJECTS:${tests}> $<TARGET_OBJECTS:${objects}>)
  target_link_libraries(${test} PRIVATE transpose_testing)
  if(register)
    transpose_add_tests(${test})
  endif()

  # bench_exNN_<tree>: the same objects timed by the steps' harness (run_step), so a reader can
  # compare a kernel with the copy ceiling and the steps. EXERCISE_TREE names the rows.
  set(bench bench_ex${nn}_${tree})
  add_executable(${bench} ${course_dir}/tests/${bench_file} $<TARGET_OBJECTS:${objects}>)
  target_link_libraries(${bench} PRIVATE transpose_common)
  target_include_directories(${bench} PRIVATE ${course_dir})
  target_compile_definitions(${bench} PRIVATE EXERCISE_TREE="${tree}")

  if(COURSE_HIDDEN_TESTS)
    file(GLOB hidden CONFIGURE_DEPENDS ${COURSE_HIDDEN_TESTS}/${folder}/*.cu)
    if(hidden)
      set(hidden_test test_ex${nn}_hidden_${tree})
      add_executable(${hidden_test} ${hidden} $<TARGET_OBJECTS:${objects}>)
      target_link_libraries(${hidden_test} PRIVATE transpose_testing)
      target_include_directories(${hidden_test} PRIVATE ${course_dir}
                                 ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/testing)
    endif()
  endif()
endfunction()

# exercise_add_tree(<tree> <dir> [REGISTER])
#   Builds the three exercises of the tree in <dir> (see the top of this file).
function(exercise_add_tree tree dir)
  cmake_parse_arguments(ARG "REGISTER" "" "" ${ARGN})
  _exercise_add(${tree} ${dir} "${ARG_REGISTER}" 01 01_rectangular test_rectangular.cu bench_rectangular.cu
                SOURCES rectangular.cu)
  _exercise_add(${tree} ${dir} "${ARG_REGISTER}" 02 02_swizzle test_swizzle.cu bench_swizzle.cu
                SOURCES swizzled.cu course:tests/swizzle_host.cu)
  _exercise_add(${tree} ${dir} "${ARG_REGISTER}" 03 03_inplace test_inplace.cu bench_inplace.cu
                SOURCES inplace.cu)
endfunction()

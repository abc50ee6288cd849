# The grader configures its staged copy of the course with
#   -DCMAKE_PROJECT_transpose_course_INCLUDE=<this file>
# so that its own targets join the course's build without any change to the course: this file
# runs inside project(), and defers worker_targets.cmake to the end of the top-level
# CMakeLists.txt, when the exercises' targets exist.
# (A deferred call's arguments are evaluated when it runs, hence the variable.)
set(GRADER_WORKER_TARGETS ${CMAKE_CURRENT_LIST_DIR}/worker_targets.cmake)
cmake_language(DEFER CALL include ${GRADER_WORKER_TARGETS})

// HOSTILE (exercise 1): no answer of its own: it #includes the course's reference answer, found
// by a relative path from where the grader compiles it, through a macro so that the static
// check of #include lines does not see it.
// What must happen: a submission is compiled in the sandbox, where the course (solutions/ with
// it) is replaced by an empty folder. The include finds nothing and the build fails: exercise 1
// scores 0.
#define GRADER_SOLUTION_A "../../../../../../solutions/01_rectangular/rectangular.cu"
#define GRADER_SOLUTION_B "../../../../../../../solutions/01_rectangular/rectangular.cu"
#if __has_include(GRADER_SOLUTION_A)
#include GRADER_SOLUTION_A
#elif __has_include(GRADER_SOLUTION_B)
#include GRADER_SOLUTION_B
#else
#error "cannot read the course's solutions from here"
#endif

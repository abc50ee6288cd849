// A hidden test of the self-test: its source holds a secret (HIDDEN_SECRET_TOKEN_9731) that no
// process holding the submission's code may read.
#include <gtest/gtest.h>

#include "ex01.cuh"

TEST(CpuHiddenEx01, OneBlockForOneTile) { EXPECT_EQ(ex01::blocks_for(32, 32), 1); }

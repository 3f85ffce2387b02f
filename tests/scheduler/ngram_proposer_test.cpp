// propose_ngram_draft: prompt lookup over a sequence's own tokens.
#include "scheduler/ngram_proposer.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace ps {
namespace {

using Tokens = std::vector<int32_t>;

Tokens draft(const Tokens& tokens, int32_t max_draft, int32_t ngram_max, int32_t ngram_min = 1) {
  return propose_ngram_draft(tokens, NgramLookup{max_draft, ngram_max, ngram_min});
}

TEST(NgramProposer, NoEarlierOccurrenceGivesNoDraft) {
  EXPECT_TRUE(draft({1, 2, 3, 4, 5}, 4, 3).empty());
  EXPECT_TRUE(draft({7}, 4, 3).empty());     // nothing before the suffix
  EXPECT_TRUE(draft({7, 7}, 0, 3).empty());  // max_draft 0
}

TEST(NgramProposer, ProposesWhatFollowedTheEarlierOccurrence) {
  // Suffix "2 3" occurred at 1..2, followed by 4 5 6.
  EXPECT_EQ(draft({1, 2, 3, 4, 5, 6, 9, 2, 3}, 3, 2), (Tokens{4, 5, 6}));
  // Capped by max_draft.
  EXPECT_EQ(draft({1, 2, 3, 4, 5, 6, 9, 2, 3}, 2, 2), (Tokens{4, 5}));
}

TEST(NgramProposer, StopsAtTheEndOfTheSequence) {
  // Suffix "5" occurred at 1, followed by 6 5 (then the sequence ends).
  EXPECT_EQ(draft({4, 5, 6, 5}, 8, 1), (Tokens{6, 5}));
}

TEST(NgramProposer, TheLongestMatchingSuffixWins) {
  // n = 3 ("1 2 3") matches at 0 and proposes 4; n = 1 ("3") alone would match the more
  // recent 3 at position 6, which is followed by 8.
  const Tokens t{1, 2, 3, 4, 0, 0, 3, 8, 1, 2, 3};
  EXPECT_EQ(draft(t, 1, 3), (Tokens{4}));
  // With ngram_max 1 only the single-token suffix is tried: the most recent earlier 3 wins.
  EXPECT_EQ(draft(t, 1, 1), (Tokens{8}));
}

TEST(NgramProposer, TheMostRecentOccurrenceWins) {
  EXPECT_EQ(draft({5, 1, 5, 2, 5}, 1, 1), (Tokens{2}));
}

TEST(NgramProposer, SuffixesShorterThanNgramMinAreNotTried) {
  // Only "3" (n = 1) occurs earlier; with ngram_min 2 that is not enough.
  const Tokens t{3, 9, 7, 3};
  EXPECT_EQ(draft(t, 2, 3, 1), (Tokens{9, 7}));
  EXPECT_TRUE(draft(t, 2, 3, 2).empty());
}

TEST(NgramProposer, ARepeatingLoopIsPredictedOverlappingItself) {
  // "1 2 1 2 1": suffix "2 1" (n = 2) last occurred at 1..2; the tokens after it run into the
  // suffix itself, which is fine: they are earlier tokens.
  EXPECT_EQ(draft({1, 2, 1, 2, 1}, 4, 2), (Tokens{2, 1}));
}

TEST(NgramProposer, RejectsBadNgramBounds) {
  EXPECT_THROW(draft({1, 1}, 2, 3, 0), std::invalid_argument);
  EXPECT_THROW(draft({1, 1}, 2, 2, 3), std::invalid_argument);
}

}  // namespace
}  // namespace ps

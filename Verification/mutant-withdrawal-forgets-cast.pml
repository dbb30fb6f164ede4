/*
 * Mutant: a withdrawal that forgets a cast. When the last open vote is withdrawn, this withdrawVote only checks
 * whether the promise is orphaned; it ignores the reason a cast vote left behind, so shared work whose other
 * consumer cancelled keeps running. spin must find it (Verification/check.sh fails if it does not).
 *
 * Run as it is (`spin -run mutant-withdrawal-forgets-cast.pml`): the scenario is included below, and it
 * includes this file again where the original transition stands, this time for the replacement only.
 */
#ifndef MUTATION
#define MUTANT_WITHDRAW_VOTE
#define MUTATION "mutant-withdrawal-forgets-cast.pml"
#include "scenario-shared-upstream.pml"
#else
inline withdrawVote(p, e, ract, act, ar, out) {
    act = 0; ar = NOREASON; out = 0;
    if
    :: voteOpen[e] ->
        voteOpen[e] = false;
        if
        :: phase[p] == PENDING ->
            closeOpenVote(p);
            if
            :: openVotes[p] == 0 -> releaseIfOrphaned(p, ract, out)   /* the bug: reason[p] is not looked at */
            :: else -> ract = R_NONE
            fi
        :: else -> ract = R_NONE
        fi
    :: else -> ract = R_NONE
    fi
}
#endif

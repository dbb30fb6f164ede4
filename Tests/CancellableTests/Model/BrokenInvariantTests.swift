import Testing

@testable import Cancellable

// Exit tests run their body in a child process: Swift 6.2's swift-testing, on the systems that can spawn one.
#if compiler(>=6.2) && (os(macOS) || os(Linux))
/// A count of the cancellation state that would wrap below zero stops the process with the reason, rather than
/// leaving a promise that thinks thousands of votes are open (and so is never cancelled). The model checks that no
/// interleaving gets there (`closeOpenVote` and `releaseHolder` in Verification/CancellationState.pml).
@Suite struct BrokenInvariantTests {
    @Test func castingAVoteThatWasNeverCountedStops() async {
        await #expect(processExitsWith: .failure) {
            var state = CancellationState()
            var isOpen = true  // the vote's own flag says open, but the state counts no open vote
            _ = state.castVote(&isOpen, reason: .user)
        }
    }

    @Test func withdrawingAVoteThatWasNeverCountedStops() async {
        await #expect(processExitsWith: .failure) {
            var state = CancellationState()
            var isOpen = true
            _ = state.withdrawVote(&isOpen)
        }
    }

    @Test func releasingAHolderTwiceStops() async {
        await #expect(processExitsWith: .failure) {
            var state = CancellationState()
            _ = state.releaseHolder()  // its one holder: its object
            _ = state.releaseHolder()
        }
    }

    @Test func theSameCallsOnCountedVotesAndHoldersDoNot() {
        var state = CancellationState()
        let counted = state.addVote()
        #expect(counted)
        var isOpen = true
        if case .otherVotesOpen = state.castVote(&isOpen, reason: .user) {
            Issue.record("the last open vote cast cancels")
        }
        #expect(state.isCancelled)
        // Cast again, the closed vote re-asserts the cancellation; on a pending promise it is a vote closed.
        guard case .alreadyCancelled(.user) = state.castVote(&isOpen, reason: .timeout) else {
            Issue.record("a closed vote on a cancelled promise re-asserts its reason")
            return
        }
        var pending = CancellationState()
        var closed = false
        guard case .voteClosed = pending.castVote(&closed, reason: .user) else {
            Issue.record("a closed vote on a pending promise changes nothing, and says so")
            return
        }
        _ = pending.releaseHolder()
        #expect(pending.holders == 0)
    }
}
#endif

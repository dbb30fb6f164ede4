import Dispatch
import PromiseCore
import TestSupport
import Testing

@Suite struct HangTests {
    @Test func offTheMainThreadHangBlocksUntilResolved() throws {
        let (promise, resolver) = Promise<Int>.pending()
        DispatchQueue.global().async { resolver.fulfill(4) }
        #expect(try hang(promise) == 4)
    }

    @Test func hangThrowsTheError() {
        let error = TestError()
        #expect(throws: error) { try hang(Promise<Int>(error: error)) }
    }

    @Test func waitOnTheMainQueueLogs() async {
        let logged = await MainActor.run {
            LogCapture.events {
                _ = Guarantee.value(1).wait()
            }
        }
        #expect(logged.filter(\.isWaitOnMainThread).count == 1)
    }

    @Test func waitOffTheMainQueueDoesNotLog() {
        let logged = LogCapture.events {
            _ = Guarantee.value(1).wait()
        }
        #expect(logged.isEmpty)
    }
}

import Dispatch
import PromiseCore
import TestSupport
import Testing

/// Reads the configuration only: tests run in parallel and must not change `conf` (the log handler, set
/// once by `LogCapture`, is the single exception).
@Suite struct ConfigurationTests {
    @Test func defaultsMatchPromiseKit() {
        let configuration = PMKConfiguration()
        #expect(configuration.Q.map?.label == DispatchQueue.main.label)
        #expect(configuration.Q.return?.label == DispatchQueue.main.label)
        #expect(configuration.catchPolicy == .allErrorsExceptCancellation)
    }

    @Test func confIsAValueThatCanBeCopiedAndChanged() {
        var copy = conf
        copy.Q.map = nil
        copy.catchPolicy = .allErrors
        #expect(copy.Q.map == nil)
        #expect(conf.Q.map?.label == DispatchQueue.main.label)
    }

    /// Under ThreadSanitizer a data race here fails the run; everywhere, every read sees the configuration.
    @Test func confCanBeReadFromManyThreadsAtOnce() {
        let expected = conf.Q.map?.label
        let consistent = Shared(0)
        DispatchQueue.concurrentPerform(iterations: 1_000) { _ in
            if conf.Q.map?.label == expected, conf.catchPolicy == .allErrorsExceptCancellation {
                consistent.increment()
            }
        }
        #expect(consistent.current == 1_000)
    }
}

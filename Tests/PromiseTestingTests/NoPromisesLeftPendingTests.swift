import Cancellable
import Foundation
import PromiseCore
import PromiseTesting
import Testing

#if canImport(XCTest)
import XCTest
#endif

/// The leak check, as a trait and as a function: it names each creation site, sees only its own test's promises,
/// and says nothing when everything finished.
struct NoPromisesLeftPendingTests {
    final class Keeper: @unchecked Sendable {
        var objects: [Any] = []
    }

    static let thisFile = "PromiseTestingTests/NoPromisesLeftPendingTests.swift"

    @Test(.enabled(if: PromiseDiagnostics.recordsCreationSites, "only debug builds record creation sites"))
    func theTraitNamesTheCreationSiteOfAPromiseLeftPending() async throws {
        let test = try #require(Test.current)
        let keeper = Keeper()
        let trait: NoPromisesLeftPendingTrait = .noPromisesLeftPending
        let leakLine = #line + 4
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                let (finished, finish) = Promise<Int>.pending()
                let (leaked, resolver) = CancellablePromise<Int>.pending()
                finish.fulfill(1)
                keeper.objects = [finished, leaked, resolver]
            }
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return issue.sourceLocation?.line == test.sourceLocation.line
                && text.contains("1 promise left pending")
                && text.contains("CancellablePromise<Int> created at \(Self.thisFile):\(leakLine)")
                && text.contains("its cancel handlers are still registered")
        }
        #expect(keeper.objects.count == 3)
    }

    @Test(.enabled(if: PromiseDiagnostics.recordsCreationSites, "only debug builds record creation sites"))
    func aPromiseWhoseResolverWasReleasedIsReportedEvenOnceItIsGone() async {
        let leakLine = #line + 3
        await withKnownIssue {
            await withNoPromisesLeftPending {
                _ = Promise<String>.pending()
            }
        } matching: { issue in
            issue.comments.map(\.rawValue).joined()
                .contains("Promise<String> created at \(Self.thisFile):\(leakLine), which can never resolve")
        }
    }

    @Test(.noPromisesLeftPending) func nothingIsReportedWhenEverythingFinished() async throws {
        let (work, resolver) = CancellablePromise<Int>.pending()
        let doubled = work.map(on: nil) { $0 * 2 }
        resolver.fulfill(21)
        #expect(try await doubled.async() == 42)
        let cancelled = CancellablePromise<Int> { _ in {} }
        cancelled.cancel()
    }

    @Test(.enabled(if: PromiseDiagnostics.recordsCreationSites, "only debug builds record creation sites"))
    func promisesOfOtherTasksAreNotCounted() async {
        let keeper = Keeper()
        await withNoPromisesLeftPending {
            // Made in another task (as a test running in parallel would): not this check's.
            let other = await Task.detached { Promise<Int>.pending() }.value
            keeper.objects = [other.promise, other.resolver]
        }
        #expect(keeper.objects.count == 2)
    }
}

#if canImport(XCTest)
final class FailIfPromisesLeftPendingTests: XCTestCase {
    func testNothingIsReportedWhenEverythingFinished() throws {
        failIfPromisesLeftPending()
        let (work, resolver) = Promise<Int>.pending()
        resolver.fulfill(1)
        XCTAssertEqual(work.value, 1)
    }
}
#endif

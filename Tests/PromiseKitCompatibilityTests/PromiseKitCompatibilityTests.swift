import Cancellable
import Dispatch
import PromiseCore
import XCTest

/// Runs the PromiseKit-era client code with XCTest, the framework those code bases used, to check that it
/// behaves as it did, not only that it compiles. XCTest runs on the main thread and the handlers default to
/// the main queue, so the tests wait with expectations (which serve the main run loop), as PromiseKit's own
/// tests did.
final class PromiseKitCompatibilityTests: XCTestCase {
    func testPipelineRunsAsBefore() {
        let service = LegacyService()
        let finished = expectation(description: "pipeline")
        service.pipeline().done { text in
            XCTAssertEqual(text, "\u{1}\u{2}\u{3}")
            XCTAssertEqual(service.log.last, "ensure")
            XCTAssertEqual(service.cache["key"] as? String, "user")
            finished.fulfill()
        }.catch { XCTFail("\($0)") }
        wait(for: [finished], timeout: 10)
    }

    func testCombinatorsSequencesAndHelpers() {
        let service = LegacyService()
        let finished = expectation(description: "combinators")
        service.combinators().then {
            service.sequences()
        }.then { sorted -> Promise<Int> in
            XCTAssertEqual(sorted, [4, 6])
            return service.dispatchHelpers()
        }.then { value -> Guarantee<Void> in
            XCTAssertEqual(value, 2)
            return service.guarantees()
        }.done {
            XCTAssertEqual(service.log, ["2", "42"])
            finished.fulfill()
        }.catch { XCTFail("\($0)") }
        wait(for: [finished], timeout: 10)
    }

    func testLogEventsAndQualifiedNamesAreAsInPromiseKit() {
        let service = LegacyService()
        XCTAssertEqual(
            Array(service.loggedLines().prefix(3)),
            ["waitOnMainThread", "pendingPromiseDeallocated", "pendingGuaranteeDeallocated"]
        )
        XCTAssertTrue(service.loggedLines()[3].hasPrefix("cauterized("))
        XCTAssertEqual(service.qualifiedConfiguration().catchPolicy, conf.catchPolicy)
    }

    /// PromiseKit's own tests compare descriptions (its `PromiseTests.testDescription` and friends).
    func testDescriptionsAreAsInPromiseKit() {
        enum Error: Swift.Error { case dummy }
        XCTAssertEqual("\(Promise<Int>.pending().promise)", "Promise(…Int)")
        XCTAssertEqual(Promise<Int>.pending().promise.debugDescription, "Promise<Int>.pending(handlers: 0)")
        XCTAssertEqual("\(Promise.value(3))", "Promise(3)")
        XCTAssertEqual(Promise().debugDescription, "Promise<()>.fulfilled(())")
        XCTAssertEqual("\(Promise<String>(error: Error.dummy))", "Promise(dummy)")
        XCTAssertEqual(Promise<String>(error: Error.dummy).debugDescription, "Promise<String>.rejected(Error.dummy)")
    }

    func testErrorHandlingRunsCatchThenFinally() {
        let service = LegacyService()
        let finished = expectation(description: "finally")
        service.errorHandling {
            XCTAssertEqual(service.log, ["caught", "finally"])
            finished.fulfill()
        }
        wait(for: [finished], timeout: 10)
    }

    func testBlockingHelpersOffTheMainThread() {
        let service = LegacyService()
        let finished = expectation(description: "blocking")
        DispatchQueue.global().async {
            XCTAssertEqual(try? service.blocking(), 3)
            finished.fulfill()
        }
        wait(for: [finished], timeout: 10)
    }

    /// XCTest runs on the main thread. Both values need the main queue to resolve (default queues, and a
    /// main-queue completion), so `hang` deadlocks unless it really serves the main run loop.
    func testHangServesTheMainRunLoop() throws {
        let service = LegacyService()
        XCTAssertEqual(try hang(Promise.value(1).map { $0 + 1 }), 2)
        XCTAssertEqual(try hang(Promise(service.guaranteeFromAFunction())), 5)
    }
}

final class CancellablePromiseKitCompatibilityTests: XCTestCase {
    func testRaceWithAutoCancelCancelsTheSlowMirror() {
        let downloader = LegacyDownloader()
        let finished = expectation(description: "race")
        downloader.handling(downloader.races()) { finished.fulfill() }
        wait(for: [finished], timeout: 10)
        XCTAssertEqual(downloader.progress.sorted(), ["cancelled slow", "fast"])
    }

    func testCancelRunsTheHandlerAndCatchSeesIt() {
        let downloader = LegacyDownloader()
        let download = downloader.download("file", delay: 5)
        let finished = expectation(description: "cancelled")
        downloader.handling(download) { finished.fulfill() }
        downloader.stop(download)
        wait(for: [finished], timeout: 10)
        XCTAssertEqual(downloader.progress, ["cancelled file", "was cancelled"])
    }

    func testAnEnsuredConditionThatFulfilledDoesNotCancel() {
        let downloader = LegacyDownloader()
        let finished = expectation(description: "ensured")
        downloader.ensured(condition: Promise()).done { value in
            XCTAssertEqual(value, "ensured")
            finished.fulfill()
        }.catch { XCTFail("\($0)") }
        wait(for: [finished], timeout: 10)
    }

    func testCancellingAVoidRecoveryStopsTheDownload() {
        let downloader = LegacyDownloader()
        let saved = downloader.saveIgnoringErrors("file")
        saved.cancel()
        XCTAssertTrue(saved.isCancelled)
        XCTAssertEqual(downloader.progress, ["cancelled file"])
    }

    func testAnOrphanedSideBranchDoesNotKeepTheDownloadAlive() {
        let downloader = LegacyDownloader()
        let count = downloader.downloadWithSpinner("file")
        let stopped = expectation(description: "spinner")
        count.ensure { stopped.fulfill() }.cauterize()
        count.cancel()
        XCTAssertEqual(downloader.progress, ["cancelled file"])
        wait(for: [stopped], timeout: 10)
        XCTAssertEqual(downloader.progress, ["cancelled file", "spinner stopped"])
    }

    func testAWrapperReleasedWhilePendingFulfilsItsCancelPromise() {
        let downloader = LegacyDownloader()
        let released = expectation(description: "released")
        downloader.orphanedWrapper { released.fulfill() }
        wait(for: [released], timeout: 10)
    }

    func testChainsCombinationsAndWrappers() {
        let downloader = LegacyDownloader()
        let finished = expectation(description: "chains")
        downloader.chained().then { count -> CancellablePromise<[String]> in
            XCTAssertEqual(count, 2)
            return downloader.combinations()
        }.then { values -> CancellablePromise<String> in
            XCTAssertEqual(values, ["a!", "b!"])
            return downloader.wrapper()
        }.then { value -> CancellablePromise<Int> in
            XCTAssertEqual(value, "wrapped")
            return downloader.wrapped()
        }.done { value in
            XCTAssertEqual(value, 1)
            finished.fulfill()
        }.catch { XCTFail("\($0)") }
        wait(for: [finished], timeout: 10)
    }

    /// The Swift 5 download manager (`CancellableURLSessionClientCode.swift`): a transfer cancelled at once is seen
    /// as a cancellation, and the launch cleanup removes a partial file nothing names.
    func testTheDownloadManagerCancelsAndCleansUp() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("swift5-client-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let manager = LegacyDownloadManager(folder: folder)
        let page = manager.page(URL(string: "http://127.0.0.1:9/")!)
        let cancelled = expectation(description: "cancelled")
        page.catch(policy: .allErrors) { error in
            XCTAssertTrue(error.isCancelled, "\(error)")
            cancelled.fulfill()
        }
        page.cancel()
        wait(for: [cancelled], timeout: 10)

        let orphan = folder.appendingPathComponent(".file.bin.\(UUID().uuidString).partial")
        try Data([1, 2, 3]).write(to: orphan)
        XCTAssertEqual(try manager.cleanUp().map(\.lastPathComponent), [orphan.lastPathComponent])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
    }
}

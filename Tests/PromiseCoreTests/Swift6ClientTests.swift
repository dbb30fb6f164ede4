import Dispatch
import PromiseCore
import TestSupport
import Testing

/// Everyday Swift 6 client code compiles without ceremony: a main-actor view model updating its own state
/// in `done`/`catch`/`finally` on the default (main) queue, background steps with Sendable values, and a
/// `Resolver` captured by `@Sendable` closures.
@MainActor
final class ProfileViewModel {
    var name = ""
    var failure: Error?
    var isLoading = false

    func load(_ fetch: Promise<String>, completion: @escaping () -> Void) {
        isLoading = true
        fetch
            .map(on: .global()) { $0.uppercased() }
            .done { name in self.name = name }
            .catch { error in self.failure = error }
            .finally {
                self.isLoading = false
                completion()
            }
    }
}

func fetchName(_ name: String) -> Promise<String> {
    Promise { seal in
        DispatchQueue.global().async { seal.fulfill(name) }
    }
}

func fetchNameWithATask(_ name: String) -> Promise<String> {
    Promise { seal in
        Task { seal.fulfill(name) }
    }
}

@Suite struct Swift6ClientTests {
    // Where a body passed without `on:` runs (Docs/Design/0001): on the main queue if it was written on the main
    // actor, whatever `conf` says; on `conf`'s queue if it was written outside any actor.
    @Test @MainActor func aBodyWrittenOnTheMainActorRunsOnTheMainQueueWhateverConfSays() {
        // `DispatchQueue.main` makes a new wrapper on each access on Linux: compare labels.
        #expect(defaultQueue(.global(), for: #isolation, calling: "map")?.label == DispatchQueue.main.label)
        #expect(defaultQueue(nil, for: #isolation, calling: "map")?.label == DispatchQueue.main.label)
    }

    @Test func aBodyWrittenOutsideAnyActorRunsOnConfsQueue() {
        let queue = DispatchQueue(label: "configured")
        #expect(defaultQueue(queue, for: #isolation, calling: "map") === queue)
        #expect(defaultQueue(nil, for: #isolation, calling: "map") == nil)
    }

    @Test @MainActor func aMainActorMapBodyRunsOnTheMainQueue() async {
        // Under `swift test` on Linux the main queue is not always drained by the main thread: mark the queue.
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        let onMain = await withCheckedContinuation { continuation in
            _ = fetchName("ada").map { _ in continuation.resume(returning: DispatchQueue.getSpecific(key: key) == true)
            }
        }
        #expect(onMain)
    }

    @Test @MainActor func bodiesWithOnRunWhereOnSaysAndTheRestOnTheMainQueue() async {
        let key = DispatchSpecificKey<String>()
        let background = DispatchQueue(label: "background")
        let resolving = DispatchQueue(label: "resolving")
        for (queue, name) in [(DispatchQueue.main, "main"), (background, "background"), (resolving, "resolving")] {
            queue.setSpecific(key: key, value: name)
        }
        let (promise, seal) = Promise<Void>.pending()
        let places = await withCheckedContinuation { continuation in
            promise
                .map(on: background) { [key] in DispatchQueue.getSpecific(key: key) }
                .map(on: nil) { [key] first in [first, DispatchQueue.getSpecific(key: key)] }  // inline, where resolved
                .done { places in continuation.resume(returning: places + [DispatchQueue.getSpecific(key: key)]) }
                .cauterize()
            resolving.async { seal.fulfill(()) }
        }
        #expect(places == ["background", "background", "main"])
    }

    @Test @MainActor func mainActorViewModelUpdatesItsStateOnTheMainQueue() async {
        let model = ProfileViewModel()
        await withCheckedContinuation { continuation in
            model.load(fetchName("ada")) { continuation.resume() }
        }
        #expect(model.name == "ADA")
        #expect(!model.isLoading)
        #expect(model.failure == nil)
    }

    @Test @MainActor func mainActorViewModelSeesErrors() async {
        let model = ProfileViewModel()
        let error = TestError()
        await withCheckedContinuation { continuation in
            model.load(Promise(error: error)) { continuation.resume() }
        }
        #expect(model.failure as? TestError == error)
    }

    @Test func resolverCapturedByATask() async throws {
        #expect(try await fetchNameWithATask("x").async() == "x")
    }
}

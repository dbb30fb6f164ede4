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

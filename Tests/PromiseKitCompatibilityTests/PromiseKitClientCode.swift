// PromiseKit 6/8 client code, unchanged except for `import PromiseKit` → `import PromiseCore`, compiled in
// Swift 5 language mode. If this target builds, migrating is changing the import.

import Foundation
import PromiseCore

enum LegacyError: Error {
    case notFound
}

/// A PromiseKit-era service: non-Sendable values (`[String: Any]`), resolvers captured by escaping closures,
/// mutable class state updated from handlers.
final class LegacyService {
    var cache: [String: Any] = [:]
    var log: [String] = []

    func fetchJSON(_ key: String) -> Promise<[String: Any]> {
        Promise { seal in
            DispatchQueue.global().async {
                if key.isEmpty {
                    seal.reject(LegacyError.notFound)
                } else {
                    seal.fulfill(["key": key])
                }
            }
        }
    }

    func cocoaStyle(_ completion: @escaping (Data?, Error?) -> Void) {
        DispatchQueue.global().async { completion(Data([1, 2, 3]), nil) }
    }

    func fetchData() -> Promise<Data> {
        Promise { seal in cocoaStyle(seal.resolve) }
    }

    func fetchCount() -> Promise<Int> {
        fetchData().map(on: nil) { $0.count }
    }

    func pipeline() -> Promise<String> {
        firstly {
            fetchJSON("user")
        }.then { json -> Promise<Data> in
            self.cache = json
            return self.fetchData()
        }.compactMap {
            String(data: $0, encoding: .utf8)
        }.get { text in
            self.log.append(text)
        }.tap { result in
            if case .rejected(let error) = result { self.log.append("\(error)") }
        }.recover { error -> Promise<String> in
            guard case LegacyError.notFound = error else { throw error }
            return .value("fallback")
        }.ensure {
            self.log.append("ensure")
        }
    }

    func combinators() -> Promise<Void> {
        let counts = [fetchCount(), fetchCount()]
        return when(fulfilled: counts).then { values -> Promise<(Int, [String: Any])> in
            precondition(values.count == 2)
            return when(fulfilled: self.fetchCount(), self.fetchJSON("k"))
        }.then { _ in
            race(self.fetchCount(), self.fetchCount())
        }.then { _ in
            when(resolved: counts)
        }.done { results in
            self.log.append("\(results.filter { $0.isFulfilled }.count)")
        }
    }

    func guarantees() -> Guarantee<Void> {
        after(seconds: 0.01).then {
            after(.milliseconds(1))
        }.map {
            42
        }.done { value in
            self.log.append("\(value)")
        }
    }

    func sequences() -> Promise<[Int]> {
        Promise.value([3, 1, 2])
            .mapValues { $0 * 2 }
            .filterValues { $0 > 2 }
            .thenMap { Promise.value($0) }
            .sortedValues()
    }

    func errorHandling(completion: @escaping () -> Void) {
        fetchJSON("").done { _ in
            self.log.append("never")
        }.catch(policy: .allErrors) { error in
            if error.isCancelled { return }
            self.log.append("caught")
        }.finally {
            self.log.append("finally")
            completion()
        }
        fetchCount().asVoid().cauterize()
        fetchCount().ensureThen { after(seconds: 0) }.done { _ in }.catch { _ in }
    }

    func dispatchHelpers() -> Promise<Int> {
        DispatchQueue.global().async(.promise) { () throws -> Int in
            throw PMKError.cancelled
        }.recover { error -> Guarantee<Int> in
            .value((error as? PMKError) == .cancelled ? 1 : 0)
        }.then { value in
            DispatchQueue.global().async(.promise) { value + 1 }
        }
    }

    func configure() {
        conf.Q.map = .main
        conf.Q = (map: DispatchQueue.main, return: DispatchQueue.main)
        conf.catchPolicy = .allErrorsExceptCancellation
        conf.logHandler = { event in
            switch event {
            case .waitOnMainThread, .pendingPromiseDeallocated, .pendingGuaranteeDeallocated: break
            case .cauterized(let error): print(error)
            }
        }
    }

    /// Module-qualified names: `PromiseKit.` became `PromiseCore.`, the one edit besides the imports.
    func qualifiedConfiguration() -> PromiseCore.PMKConfiguration {
        let saved = PromiseCore.conf
        PromiseCore.conf.Q.map = saved.Q.map
        let _: PromiseCore.Promise<Int> = PromiseCore.Promise.value(1)
        return saved
    }

    /// Log events as PromiseKit code builds them (a test double for a logger) and prints them.
    func loggedLines(
        _ events: [PromiseCore.LogEvent] = [
            .waitOnMainThread, PromiseCore.LogEvent.pendingPromiseDeallocated, LogEvent.pendingGuaranteeDeallocated,
            .cauterized(PMKError.badInput),
        ]
    ) -> [String] {
        events.map { "\($0)" }
    }

    func blocking() throws -> Int {
        let (promise, resolver) = Promise<Int>.pending()
        resolver.fulfill(1)
        let (guarantee, resolve) = Guarantee<Int>.pending()
        resolve(2)
        return try promise.wait() + guarantee.wait() + hang(Promise.value(0))
    }

    func legacyCompletion(_ completion: @escaping (Int) -> Void) {
        DispatchQueue.main.async { completion(5) }
    }

    func guaranteeFromAFunction() -> Guarantee<Int> {
        Guarantee(resolver: legacyCompletion)
    }

    func swiftConcurrency() async throws -> Int {
        let value = try await fetchCount().async()
        let other = await Guarantee.value(1).async()
        return value + other
    }
}

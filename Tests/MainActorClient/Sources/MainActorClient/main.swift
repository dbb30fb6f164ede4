// Everything declared here is @MainActor (default isolation), as in a new Xcode app target. The everyday code
// compiles without ceremony, and each body runs where it may: main-actor bodies on the main thread, `on:` bodies
// where `on:` says. Exits 0 once every check passed; 1 on a failed check or after 30 seconds.
//
// `MainActorClient wrong-actor` starts a chain without `on:` inside another actor, which must stop at the call
// with a message (.ci/run checks the message and the failure).
import Cancellable
import Dispatch
import Foundation
import PromiseCore

struct Item { let id: Int }
func parse(_ raw: Int) -> Item { Item(id: raw) }  // main actor

nonisolated func fetch(_ id: Int) -> Promise<Int> {
    Promise { seal in DispatchQueue.global().async { seal.fulfill(id) } }
}

nonisolated func download(_ id: Int) -> CancellablePromise<Int> {
    CancellablePromise { resolver in
        let work = DispatchWorkItem { resolver.fulfill(id) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: work)
        return { work.cancel() }
    }
}

func check(_ condition: Bool, _ what: String) {
    guard condition else {
        print("FAIL: \(what)")
        exit(1)
    }
    print("ok: \(what)")
}

final class Loader {
    var items: [Item] = []
    var status = "idle"
    var cancelled = false

    func load(_ ids: [Int]) -> Promise<Void> {
        status = "loading"
        // The work waits until the whole chain is built: on a loaded machine it could otherwise resolve before the
        // `on: nil` step is attached, which would then run at once, on the main thread attaching it.
        let chainBuilt = DispatchSemaphore(value: 0)
        let chain = when(fulfilled: ids.map(fetch))
            .map(on: .global()) { raws in  // nonisolated work only
                chainBuilt.wait()
                return (raws.map { $0 * 2 }, Thread.isMainThread)
            }
            .map(on: nil) { raws, wasMain in (raws, wasMain || Thread.isMainThread) }  // inline, where resolved
            .map { raws, wasMain in
                check(!wasMain, "on: .global() and on: nil bodies run off the main thread")
                check(Thread.isMainThread, "a default-queue map body written on the main actor runs on the main thread")
                return raws.map(parse)  // main-actor code, on the main actor
            }
            .get { _ in self.status = "parsed" }
            .done { items in self.items = items }
            .recover { _ in self.status = "failed" }
            .ensure { check(Thread.isMainThread, "ensure runs on the main thread") }
        chainBuilt.signal()
        return chain
    }

    /// Guarantees and the sequence helpers, written on the main actor: their bodies run there too.
    func rank(_ raws: [Int]) -> Guarantee<[Item]> {
        Guarantee.value(raws)
            .map { raws in raws.sorted() }
            .thenMap { raw in Guarantee.value(parse(raw)) }
            .filterValues { item in item.id > 0 }
            .get { _ in check(Thread.isMainThread, "guarantee and sequence-helper bodies run on the main thread") }
    }

    func startDownload() -> CancellablePromise<Void> {
        download(1)
            .map(on: nil) { $0 + 1 }
            .done { _ in self.status = "downloaded" }
    }
}

/// A store on an actor other than the main actor: the library cannot run a body on it, so a chain started here
/// without `on:` must stop with a message.
actor Store {
    var count = 0
    func refresh(_ promise: Promise<Int>) {
        promise.done { value in self.count = value }.cauterize()
    }
}

if CommandLine.arguments.dropFirst().first == "wrong-actor" {
    Task { await Store().refresh(.value(1)) }
    DispatchQueue.global().asyncAfter(deadline: .now() + 30) {
        print("FAIL: the chain on another actor did not stop")
        exit(1)
    }
    RunLoop.main.run()
}

let loader = Loader()
let savedMap = conf.Q.map
conf.Q.map = .global()  // a setting for bodies written outside any actor; main-actor bodies still run on main
loader.load([1, 2, 3])
    .then { () -> Promise<[Item]> in
        conf.Q.map = savedMap
        check(loader.items.map(\.id) == [2, 4, 6], "the main-actor loader updated its items")
        check(loader.status == "parsed", "get updated main-actor state")
        return Promise(loader.rank([3, 0, 1, 2]))
    }
    .done { ranked in
        check(ranked.map(\.id) == [1, 2, 3], "thenMap and filterValues ran their main-actor bodies")
        let download = loader.startDownload()
        download.catch(policy: .allErrors) { error in
            loader.cancelled = error.isCancelled
            check(Thread.isMainThread, "catch runs on the main thread")
        }
        .finally {
            check(loader.cancelled, "cancelling the download rejected the chain with a cancellation")
            print("main-actor client: all checks passed")
            exit(0)
        }
        download.cancel()
    }
    .catch { error in check(false, "unexpected error \(error)") }

DispatchQueue.global().asyncAfter(deadline: .now() + 30) {
    print("FAIL: timed out")
    exit(1)
}
RunLoop.main.run()  // on the main thread, which drains the main queue (dispatchMain() would not, on Linux)

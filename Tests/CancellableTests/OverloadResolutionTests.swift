import Cancellable
import PromiseCore
import TestSupport
import Testing

/// SPEC §3: PromiseKit's and Cancellable's overloads coexist at their natural call sites. Each call below is
/// written without a type annotation (an annotation would steer the choice); the helpers then check the
/// type that was chosen.
@Suite struct OverloadResolutionTests {
    func cancellable<T>(_ promise: CancellablePromise<T>, of type: T.Type) -> Bool { true }
    func cancellable<T>(_ promise: Promise<T>, of type: T.Type) -> Bool { false }

    @Test func arrayLiteralsOfCancellablePromisesPickTheCancellableCombinators() {
        let a = CancellablePromise.value(1)
        let b = CancellablePromise.value(2)
        #expect(cancellable(when(fulfilled: [a, b]), of: [Int].self))
        #expect(cancellable(when(fulfilled: [a, b], autoCancel: true), of: [Int].self))
        #expect(cancellable(when(resolved: [a, b]), of: [PromiseCore.Result<Int>].self))
        #expect(cancellable(race([a, b]), of: Int.self))
        #expect(cancellable(race(a, b), of: Int.self))
        #expect(cancellable(any([a, b]), of: [Maybe<Int>].self))
        #expect(cancellable(some(1, [a, b]), of: [Int].self))
        #expect(cancellable(firstly { a }, of: Int.self))
    }

    @Test func arrayLiteralsOfPromisesStillPickPromiseKitsCombinators() {
        let a = Promise.value(1)
        let b = Promise.value(2)
        #expect(!cancellable(when(fulfilled: [a, b]), of: [Int].self))
        #expect(!cancellable(race([a, b]), of: Int.self))
        #expect(!cancellable(any([a, b]), of: [Maybe<Int>].self))
        #expect(!cancellable(firstly { a }, of: Int.self))
        let mixed = when(fulfilled: [a as any Thenable, Guarantee.value("x")])
        #expect(mixed.value?.count == 2)
    }

    @Test func chainMethodsOnCancellablePromisesStayCancellable() {
        let root = CancellablePromise.value(1)
        #expect(cancellable(root.map { $0 }, of: Int.self))
        #expect(cancellable(root.then { _ in Promise.value("x") }, of: String.self))
        #expect(cancellable(root.then { _ in CancellablePromise.value("x") }, of: String.self))
        #expect(cancellable(root.done { _ in }, of: Void.self))
        #expect(cancellable(root.recover { _ in Promise.value(0) }, of: Int.self))
        #expect(cancellable(root.ensure {}, of: Int.self))
    }
}

import Cancellable
import PromiseCore
import TestSupport
import Testing

/// PromiseKit's and Cancellable's overloads coexist at their natural call sites. Each call below is
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
        #expect(cancellable(race(fulfilled: [a, b]), of: Int.self))
        #expect(cancellable(race(fulfilled: a, b), of: Int.self))
        #expect(cancellable(any([a, b]), of: [Maybe<Int>].self))
        #expect(cancellable(some(1, [a, b]), of: [Int].self))
        #expect(cancellable(firstly { a }, of: Int.self))
    }

    @Test func arrayLiteralsOfPromisesStillPickPromiseKitsCombinators() {
        let a = Promise.value(1)
        let b = Promise.value(2)
        #expect(!cancellable(when(fulfilled: [a, b]), of: [Int].self))
        #expect(!cancellable(race([a, b]), of: Int.self))
        #expect(!cancellable(race(fulfilled: [a, b]), of: Int.self))
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

    /// Issue 14, item 1: every `Thenable` and `CatchMixin` form of PromiseKit 8.2 (every `where T == …`
    /// specialisation included), called on a cancellable receiver, returns something that can still cancel.
    @Test func everyThenableAndCatchMixinFormOnACancellableReceiverStaysCancellable() {
        let number = CancellablePromise.value(1)
        let void = CancellablePromise.value(())
        let numbers = CancellablePromise.value([3, 1, 2])
        // Thenable
        #expect(cancellable(number.then { _ in Promise.value("x") }, of: String.self))
        #expect(cancellable(number.then { _ in Guarantee.value("x") }, of: String.self))
        #expect(cancellable(number.then { _ in CancellablePromise.value("x") }, of: String.self))
        #expect(cancellable(number.map { String($0) }, of: String.self))
        #expect(cancellable(number.compactMap { Int?($0) }, of: Int.self))
        #expect(cancellable(number.done { _ in }, of: Void.self))
        #expect(cancellable(number.get { _ in }, of: Int.self))
        #expect(cancellable(number.tap { _ in }, of: Int.self))
        #expect(cancellable(number.asVoid(), of: Void.self))
        // Thenable where T: Sequence / Collection
        #expect(cancellable(numbers.mapValues { $0 * 2 }, of: [Int].self))
        #expect(cancellable(numbers.flatMapValues { [$0, $0] }, of: [Int].self))
        #expect(cancellable(numbers.compactMapValues { $0 > 1 ? $0 : nil }, of: [Int].self))
        #expect(cancellable(numbers.thenMap { Promise.value($0) }, of: [Int].self))
        #expect(cancellable(numbers.thenMap { CancellablePromise.value($0) }, of: [Int].self))
        #expect(cancellable(numbers.thenFlatMap { Promise.value([$0]) }, of: [Int].self))
        #expect(cancellable(numbers.filterValues { $0 > 1 }, of: [Int].self))
        #expect(cancellable(numbers.sortedValues(), of: [Int].self))
        #expect(cancellable(numbers.firstValue, of: Int.self))
        #expect(cancellable(numbers.firstValue(where: { $0 > 1 }), of: Int.self))
        #expect(cancellable(numbers.lastValue, of: Int.self))
        // CatchMixin
        #expect(cancellable(number.recover { _ in Promise.value(0) }, of: Int.self))
        #expect(cancellable(number.recover { _ in Guarantee.value(0) }, of: Int.self))
        #expect(cancellable(number.recover { _ in .value(0) }, of: Int.self))
        #expect(cancellable(number.recover { _ in CancellablePromise.value(0) }, of: Int.self))
        #expect(cancellable(number.ensure {}, of: Int.self))
        #expect(cancellable(number.ensureThen { Guarantee.value(()) }, of: Int.self))
        #expect(cancellable(number.ensureThen { Promise.value(()) }, of: Int.self))
        // CatchMixin where T == Void: the guarantee form and the throwing form.
        #expect(cancellable(void.recover { _ in }, of: Void.self))
        #expect(cancellable(void.recover { error in guard error is TestError else { throw error } }, of: Void.self))
        #expect(cancellable(void.recover(policy: .allErrors) { _ in }, of: Void.self))
        // `catch` and `cauterize` return finalizers that can cancel.
        #expect(finalizerCancels(number.catch { _ in }))
        #expect(finalizerCancels(number.cauterize()))
    }

    /// PromiseKit's own return types stay reachable by annotation, as in code that passes them on.
    @Test func annotationsStillSelectPromiseKitsForms() {
        let void = CancellablePromise.value(())
        let guarantee: Guarantee<Void> = void.recover { _ in }
        let promise: Promise<Void> = void.recover { error in guard error is TestError else { throw error } }
        let recovered: Guarantee<Int> = CancellablePromise.value(1).recover { _ in .value(0) }
        let finalizer: PMKFinalizer = void.cauterize()
        let values: Promise<[Int]> = CancellablePromise.value([1]).mapValues(on: nil) { $0 }
        #expect(guarantee.isFulfilled && promise.isFulfilled && recovered.value == 1 && values.value == [1])
        _ = finalizer
    }

    func finalizerCancels(_ finalizer: CancellableFinalizer) -> Bool { true }
    func finalizerCancels(_ finalizer: PMKFinalizer) -> Bool { false }
}

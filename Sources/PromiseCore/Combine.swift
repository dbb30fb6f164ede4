// PromiseKit 8's Combine bridging, for code that calls it on Apple platforms. Combine does not exist on Linux, so
// this file is not compiled there: see CONTRIBUTING.md ("Apple platforms") for how it is verified.
#if canImport(Combine)
@preconcurrency public import Combine

@available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
extension Guarantee {
    /// A Combine `Future` that publishes the guarantee's value, on `conf.Q.return` (the main queue by default),
    /// as PromiseKit's does.
    ///
    /// ```swift
    /// after(seconds: 1).future().sink { print("a second later") }.store(in: &subscriptions)
    /// ```
    public func future() -> Future<T, Never> {
        Future { promise in
            self.done { value in promise(.success(value)) }
        }
    }
}

@available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
extension Promise {
    /// A Combine `Future` that publishes the promise's value or fails with its error, on `conf.Q.return` (the
    /// main queue by default).
    ///
    /// ```swift
    /// fetchUser(id: 1).future()
    ///     .sink(receiveCompletion: { print($0) }, receiveValue: { show($0) })
    ///     .store(in: &subscriptions)
    /// ```
    ///
    /// Unlike PromiseKit's, the future also fails when the promise is rejected with a cancellation error, rather
    /// than never completing.
    public func future() -> Future<T, Error> {
        Future { promise in
            self.done { value in promise(.success(value)) }
                .catch(policy: .allErrors) { error in promise(.failure(error)) }
        }
    }
}

@available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
extension Future {
    /// A promise of the future's value, rejected with its failure.
    ///
    /// ```swift
    /// let user: Promise<User> = userFuture.promise()
    /// ```
    ///
    /// The subscription lives until the promise resolves.
    public func promise() -> PromiseCore.Promise<Output> {
        let (promise, resolver) = PromiseCore.Promise<Output>.pending()
        let subscription = sink(
            receiveCompletion: { completion in
                if case .failure(let error) = completion { resolver.reject(error) }
            },
            receiveValue: { value in resolver.fulfill(value) }
        )
        promise.pipe { _ in withExtendedLifetime(subscription) {} }
        return promise
    }
}

@available(macOS 10.15, iOS 13.0, tvOS 13.0, watchOS 6.0, *)
extension Future where Failure == Never {
    /// A guarantee of the future's value.
    ///
    /// ```swift
    /// let token: Guarantee<String> = tokenFuture.guarantee()
    /// ```
    ///
    /// The subscription lives until the guarantee resolves.
    public func guarantee() -> Guarantee<Output> {
        let (guarantee, resolve) = Guarantee<Output>.pending()
        let subscription = sink { value in resolve(value) }
        guarantee.pipe { _ in withExtendedLifetime(subscription) {} }
        return guarantee
    }
}
#endif

// The part of Apple's Combine that Sources/PromiseCore/Combine.swift uses, with Apple's signatures and no
// behaviour: scripts/check-combine-bridge.sh type-checks the bridge against it on Linux, where Combine does not
// exist, so that the file cannot rot unseen. It proves the bridge compiles, not that it works on Apple platforms.
public final class AnyCancellable {
    public init(_ cancel: @escaping () -> Void) {}
    public func cancel() {}
}

public enum Subscribers {
    public enum Completion<Failure: Error> {
        case finished
        case failure(Failure)
    }
}

public protocol Publisher<Output, Failure> {
    associatedtype Output
    associatedtype Failure: Error
}

public final class Future<Output, Failure: Error>: Publisher {
    public typealias Promise = (Result<Output, Failure>) -> Void
    public init(_ attemptToFulfill: @escaping (@escaping Promise) -> Void) {}
}

extension Publisher {
    public func sink(
        receiveCompletion: @escaping ((Subscribers.Completion<Failure>) -> Void),
        receiveValue: @escaping ((Output) -> Void)
    ) -> AnyCancellable {
        AnyCancellable {}
    }
}

extension Publisher where Failure == Never {
    public func sink(receiveValue: @escaping ((Output) -> Void)) -> AnyCancellable {
        AnyCancellable {}
    }
}

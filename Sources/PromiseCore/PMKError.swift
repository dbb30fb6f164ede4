public import Foundation

/// The errors PromiseCore itself rejects with.
///
/// ```swift
/// race([Promise<Int>]()).catch { error in
///     print(error as? PMKError == .badInput)   // true
/// }
/// ```
///
/// > Note: ``compactMap(_:_:)`` and ``flatMap(_:_:)`` carry the offending value as `Any` for diagnostics,
/// > as PromiseKit does. The value is never touched by the library after the error is made, which is why
/// > the type can be `Sendable`; if you read it from several threads, make sure the value itself is
/// > thread-safe (or match the case without binding it: `case .compactMap`).
public enum PMKError: Error, @unchecked Sendable {
    /// A `Resolver` was called with neither a value nor an error: `resolve(nil, nil)`.
    case invalidCallingConvention
    /// A handler returned the very promise it was chaining: waiting for it would never end.
    case returnedSelf
    /// A combinator was given input it cannot work with, for example `race([])`, `some(5, ofThree)` or
    /// `when(fulfilled:concurrently: 0)`.
    case badInput
    /// The operation was cancelled.
    case cancelled
    /// `compactMap` produced `nil` from this value, which was to become this type.
    case compactMap(Any, Any.Type)
    /// A `flatMap`-style conversion produced `nil` from this value, which was to become this type.
    case flatMap(Any, Any.Type)
    /// `firstValue` or `lastValue` was asked of an empty sequence, or no element passed the test.
    case emptySequence
    /// `race(fulfilled:)` had no input that fulfilled.
    case noWinner
}

extension PMKError: CancellableError {
    /// Whether this is ``cancelled``.
    public var isCancelled: Bool {
        if case .cancelled = self { return true }
        return false
    }
}

extension PMKError: Equatable {
    /// Compares the cases; the payloads of ``compactMap(_:_:)`` and ``flatMap(_:_:)`` are compared by
    /// their target type only.
    public static func == (lhs: PMKError, rhs: PMKError) -> Bool {
        switch (lhs, rhs) {
        case (.invalidCallingConvention, .invalidCallingConvention), (.returnedSelf, .returnedSelf),
            (.badInput, .badInput), (.cancelled, .cancelled), (.emptySequence, .emptySequence),
            (.noWinner, .noWinner):
            return true
        case (.compactMap(_, let lhsType), .compactMap(_, let rhsType)),
            (.flatMap(_, let lhsType), .flatMap(_, let rhsType)):
            return lhsType == rhsType
        default:
            return false
        }
    }
}

extension PMKError: CustomDebugStringConvertible {
    /// What went wrong, in a sentence.
    public var debugDescription: String {
        switch self {
        case .invalidCallingConvention:
            return "A closure was called with an invalid calling convention, probably (nil, nil)"
        case .returnedSelf:
            return "A promise handler returned itself"
        case .badInput:
            return "Bad input was provided to a PromiseCore function"
        case .cancelled:
            return "The asynchronous sequence was cancelled"
        case .compactMap(let value, let type):
            return "Could not `compactMap<\(type)>`: \(value)"
        case .flatMap(let value, let type):
            return "Could not `flatMap<\(type)>`: \(value)"
        case .emptySequence:
            return "The first or last element was requested for an empty sequence"
        case .noWinner:
            return "All thenables passed to race(fulfilled:) were rejected"
        }
    }
}

extension PMKError: LocalizedError {
    /// The same sentence as ``debugDescription``, for `localizedDescription`.
    public var errorDescription: String? {
        debugDescription
    }
}

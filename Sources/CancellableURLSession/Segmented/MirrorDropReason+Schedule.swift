import Foundation

extension MirrorDropReason {
    /// Whether the mirror sent a piece that failed its digest.
    var isPieceMismatch: Bool {
        if case .pieceMismatch = self { true } else { false }
    }
}

extension MirrorDropReason {
    /// Why a mirror whose answer ``Continuation`` refused is dropped.
    init(_ verdict: Continuation.Verdict) {
        switch verdict {
        case .contentCoded(let coding): self = .contentCoded(coding)
        case .unexpectedRange(let header): self = .unexpectedContentRange(header)
        case .lengthDisagrees(let expected, let announced):
            self = .lengthDisagrees(expected: expected, announced: announced)
        case .validatorDisagrees(let expected, let announced):
            self = .validatorDisagrees(expected: expected.headerValue, announced: announced)
        case .continues, .unvalidated:
            preconditionFailure("A mirror is dropped only for an answer that does not continue the file: \(verdict)")
        }
    }
}

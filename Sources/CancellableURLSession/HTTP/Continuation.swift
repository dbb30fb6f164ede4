/// Whether an answer's bytes continue bytes of a file kept from an earlier answer: the one rule every download uses —
/// a single URL resumed, a mirror of a segmented download, a segmented download resumed.
///
/// HTTP lets a client combine two responses only if they share the same *strong* validator (RFC 9110 §15.3.7.3): the
/// same strong `ETag`, or the same `Last-Modified` date where that date is strong (§8.8.2.2). A byte offset means the
/// same in both only without a content coding; a range continues bytes only if it starts where they stop and names
/// the same length.
///
/// ```swift
/// let reference = Continuation.Reference(validator: .entityTag("\"v1\""), totalBytes: 1_000)
/// Continuation.check(RangeAnswer(response), startingAt: 400, reference: reference)   // .continues(proven: true)
/// ```
enum Continuation {
    /// What identifies the bytes kept.
    struct Reference: Sendable, Equatable {
        /// Their strong validator, if the answer that sent them had one.
        var validator: DownloadResumeData.Validator?
        /// The file's length, if known.
        var totalBytes: Int64?
        /// Whether an answer must repeat ``validator`` — bytes kept from an earlier download are proven only by
        /// that — or need only not contradict it: the mirrors of one running download, whose first answer set it.
        var mustRepeatValidator = true
        /// Whether bytes without a validator continue on the same length alone: the caller opted in
        /// (``DownloadResumeData/WithoutValidator/continueIfLengthMatches``), or a running download's mirrors, checked
        /// against its first answer.
        var lengthSuffices = false
    }

    /// How an answer's validators relate to the reference's.
    enum Relation: Sendable, Equatable {
        /// It names the reference's validator: the same strong `ETag`, or the same `Last-Modified`.
        case repeats
        /// It names another validator of the same kind: the representation changed.
        case contradicts
        /// It names none of that kind.
        case silent
    }

    /// The verdict on an answer.
    enum Verdict: Sendable, Equatable {
        /// Its bytes are of the same file; `proven` if it repeated the reference's strong validator.
        case continues(proven: Bool)
        /// Its body has a content coding: its bytes are not at the file's offsets.
        case contentCoded(String)
        /// Its `Content-Range` is absent, malformed, or not the bytes asked for.
        case unexpectedRange(String?)
        /// It names another length than the reference.
        case lengthDisagrees(expected: Int64, announced: Int64)
        /// It does not repeat the reference's validator where it must, or contradicts it: `announced` is what it
        /// named of that kind (or its own strong validator), if anything.
        case validatorDisagrees(expected: DownloadResumeData.Validator, announced: String?)
        /// The reference has no validator, and the caller did not accept the length alone.
        case unvalidated
    }

    /// How `answer`'s validator of the reference's kind relates to `validator`. An `ETag` is compared exactly, so a
    /// weak one (`W/"…"`) never repeats a strong one; a `Last-Modified` as sent.
    static func relation(of answer: RangeAnswer, to validator: DownloadResumeData.Validator) -> Relation {
        let (sent, expected): (String?, String) =
            switch validator {
            case .entityTag(let tag): (answer.entityTag, tag)
            case .lastModified(let date): (answer.lastModified, date)
            }
        guard let sent, !sent.isEmpty else { return .silent }
        return sent == expected ? .repeats : .contradicts
    }

    /// The verdict on `answer`, a `206` to a request for the bytes from `start` — up to `end` (exclusive), or to the
    /// end of the file if `nil` — against the bytes `reference` identifies.
    ///
    /// It checks, in order: no content coding; a `Content-Range` that starts at `start` and, if `end` is given, ends
    /// where the request or the file does (the file's length must then be named); the length, if named; the
    /// validator.
    static func check(
        _ answer: RangeAnswer,
        startingAt start: Int64,
        endingAt end: Int64? = nil,
        reference: Reference
    ) -> Verdict {
        if let coding = answer.contentCoding { return .contentCoded(coding) }
        guard let range = answer.range, let first = range.start, let last = range.end, first == start,
            end.map({ end in range.total.map { last + 1 == min(end, $0) } ?? false }) ?? true
        else { return .unexpectedRange(answer.rangeHeader) }
        return agreement(of: answer, announcing: range.total, with: reference)
    }

    /// The verdict on `answer`, a `200` or a `416` — the whole file, or no byte of it — announcing `length` bytes,
    /// against the bytes `reference` identifies: whether the answer is of their file.
    static func agreement(of answer: RangeAnswer, announcing length: Int64?, with reference: Reference) -> Verdict {
        if let coding = answer.contentCoding { return .contentCoded(coding) }
        if let expected = reference.totalBytes, let length, length != expected {
            return .lengthDisagrees(expected: expected, announced: length)
        }
        guard let validator = reference.validator else {
            // The length is all there is to go on: it must be named, and be the same.
            let sameLength = reference.totalBytes == nil || length == reference.totalBytes
            return reference.lengthSuffices && sameLength ? .continues(proven: false) : .unvalidated
        }
        switch relation(of: answer, to: validator) {
        case .repeats:
            return .continues(proven: true)
        case .silent where !reference.mustRepeatValidator:
            return .continues(proven: false)
        case .silent, .contradicts:
            let announced: String? =
                switch validator {
                case .entityTag: answer.entityTag ?? answer.validator?.headerValue
                case .lastModified: answer.lastModified ?? answer.validator?.headerValue
                }
            return .validatorDisagrees(expected: validator, announced: announced)
        }
    }
}

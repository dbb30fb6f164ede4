import Cancellable
public import Foundation
import PromiseCore

/// What continues a paused segmented download: which byte ranges of the file are on disk, the file's length, and how
/// the mirrors identified it.
///
/// ```swift
/// let saved = try JSONEncoder().encode(resumeData)             // survives a relaunch
/// let resumeData = try JSONDecoder().decode(SegmentedDownloadResumeData.self, from: saved)
/// session.resumeSegmentedDownload(resumeData, to: destination)
/// ```
///
/// It is `Codable`, so an app can keep it across launches; the partial file it names stays next to the destination
/// until the download is resumed or ``discard()`` is called. It is written in a documented, versioned JSON format that
/// later versions of the library read (<doc:ResumeDataFormat>, kind `segmented`). Decoding checks every field: resume
/// data read back is untrusted input (``init(from:)`` says what it refuses), and a resume opens only the partial file
/// the library names next to the destination, and only if it is a regular file that is not a link.
public struct SegmentedDownloadResumeData: Sendable, Hashable, Codable {
    /// The mirrors the download used, in the order given: where a resume fetches from unless it is given others.
    public let mirrors: [URL]
    /// Where the download goes once it finishes.
    public var destination: URL { file.destination }
    /// The hidden file next to the destination that holds the bytes so far.
    public var partialFile: URL { file.partialFile }
    /// The file's length, once a mirror had said; `nil` if the download paused before any answer (and kept nothing).
    public let totalBytes: Int64?
    /// The file's strong validator, from the mirror that answered first, if it gave one: a resume continues the bytes
    /// only with mirrors that repeat it.
    public let validator: DownloadResumeData.Validator?
    /// The byte ranges of the file that the partial file holds, in order, none touching another: each segment's
    /// bytes written so far.
    public let keptRanges: [Range<Int64>]
    /// What the finished file is checked against, if the download was given it.
    public let integrity: DownloadIntegrity?
    /// The destination and the partial file.
    private let file: PartialFileReference

    /// The number of bytes the partial file holds: the sum of ``keptRanges``' lengths.
    public var bytesKept: Int64 {
        keptRanges.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) }
    }

    /// The most mirrors resume data may name: a resume sends a request to each at once.
    public static let maximumMirrors = 256

    /// Makes resume data; the library makes it for you when a ``SegmentedDownload`` pauses.
    ///
    /// - Throws: ``DownloadError/invalidResumeData(field:reason:)`` naming the first value that no download
    ///   could have produced — the same rules as decoding (see ``init(from:)``).
    public init(
        mirrors: [URL],
        destination: URL,
        partialFile: URL,
        totalBytes: Int64?,
        validator: DownloadResumeData.Validator?,
        keptRanges: [Range<Int64>],
        integrity: DownloadIntegrity? = nil
    ) throws {
        self.init(
            storing: mirrors,
            file: PartialFileReference(destination: destination, partialFile: partialFile),
            totalBytes: totalBytes,
            validator: validator,
            keptRanges: keptRanges,
            integrity: integrity
        )
        if let (field, reason) = firstInvalidField {
            throw DownloadError.invalidResumeData(field: field.stringValue, reason: reason)
        }
    }

    /// Stores the values, unchecked: the initializers above check them.
    private init(
        storing mirrors: [URL],
        file: PartialFileReference,
        totalBytes: Int64?,
        validator: DownloadResumeData.Validator?,
        keptRanges: [Range<Int64>],
        integrity: DownloadIntegrity?
    ) {
        self.mirrors = mirrors
        self.file = file
        self.totalBytes = totalBytes
        self.validator = validator
        self.keptRanges = keptRanges
        self.integrity = integrity
    }

    /// Decodes resume data in a version of <doc:ResumeDataFormat> this library reads — version 1, or the format from
    /// before versions — and refuses what no download could have produced: resume data read back from disk or
    /// received from elsewhere is untrusted input.
    ///
    /// ```swift
    /// let saved = try? JSONDecoder().decode(SegmentedDownloadResumeData.self, from: Data(contentsOf: stateFile))
    /// ```
    ///
    /// - Throws: `DecodingError.dataCorrupted`, whose coding path names the field, if `version` is newer than this
    ///   library reads or is not a positive integer; `kind` is not `segmented`; `mirrors` is empty, names more than
    ///   ``maximumMirrors``, or one that is not an `http` or `https` URL; `destination` is not an absolute file path
    ///   without `..`; `partialFile` is not the hidden `.<name>.<UUID>.partial` file next to the destination that the
    ///   library names (in version 1, its name: one without `/`, `..` or NUL); `totalBytes` is negative, or differs
    ///   from `integrity`'s length; a kept range is not a `[start, end]` pair of integers, is empty, starts below 0,
    ///   ends past `totalBytes` (or there is no `totalBytes`), or does not begin after the one before it ends;
    ///   `validator` is not a strong entity-tag or an HTTP-date; or `integrity` cannot be checked. A field of the
    ///   wrong type, or missing, throws the `DecodingError` that says so; before versions, a range whose start is
    ///   above its end fails as `Range` itself refuses it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if try container.decodeVersion(of: .segmented) {
            self.init(
                storing: try container.decodeURLStrings(forKey: .mirrors, atMost: Self.maximumMirrors),
                file: try container.decodePartialFileReference(),
                totalBytes: try container.decodeIntegerIfPresent(Int64.self, forKey: .totalBytes),
                validator: try container.decodeValidator(),
                keptRanges: try container.decodeRangePairs(forKey: .keptRanges),
                integrity: try container.decodeIntegrityIfPresent(forKey: .integrity)
            )
        } else {
            // The format from before versions: file URLs, and the validator as Swift synthesized its coding.
            self.init(
                storing: try container.decode([URL].self, forKey: .mirrors),
                file: PartialFileReference(
                    destination: try container.decode(URL.self, forKey: .destination),
                    partialFile: try container.decode(URL.self, forKey: .partialFile)
                ),
                totalBytes: try container.decodeIfPresent(Int64.self, forKey: .totalBytes),
                validator: try container.decodeIfPresent(DownloadResumeData.Validator.self, forKey: .validator),
                keptRanges: try container.decode([Range<Int64>].self, forKey: .keptRanges),
                integrity: try container.decodeIfPresent(DownloadIntegrity.self, forKey: .integrity)
            )
        }
        if let (field, reason) = firstInvalidField {
            throw DecodingError.dataCorruptedError(forKey: field, in: container, debugDescription: reason)
        }
    }

    /// Encodes the resume data in the current version of <doc:ResumeDataFormat>, kind `segmented`.
    ///
    /// ```swift
    /// try JSONEncoder().encode(checkpoint).write(to: stateFile, options: .atomic)
    /// ```
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeVersion(of: .segmented)
        try container.encode(mirrors.map(\.absoluteString), forKey: .mirrors)
        try container.encodePartialFileReference(file)
        try container.encodeIfPresent(totalBytes, forKey: .totalBytes)
        try container.encodeValidator(validator)
        try container.encodeRangePairs(keptRanges, forKey: .keptRanges)
        try container.encodeIfPresent(integrity, forKey: .integrity)
    }

    private enum CodingKeys: String, ResumeDataCodingKey {
        case version, kind, mirrors, destination, partialFile, totalBytes, validator, keptRanges, integrity
    }

    /// The first value no download could have produced, and why; `nil` if every value could be.
    private var firstInvalidField: (CodingKeys, String)? {
        if mirrors.isEmpty { return (.mirrors, "there is no mirror") }
        if mirrors.count > Self.maximumMirrors {
            return (.mirrors, "\(mirrors.count) mirrors are more than \(Self.maximumMirrors)")
        }
        if let url = mirrors.first(where: { !$0.isHTTPWithHost }) {
            return (.mirrors, "\(url.absoluteString) is not an http or https URL")
        }
        if let problem = file.problem { return (.key(problem.field), problem.reason) }
        if let totalBytes, totalBytes < 0 { return (.totalBytes, "\(totalBytes) is negative") }
        // An integrity that cannot be checked is named as such, before its length is compared with totalBytes.
        if let problem = integrity?.problem { return (.integrity, problem) }
        if let totalBytes, let length = integrity?.length, length != totalBytes {
            return (.totalBytes, "\(totalBytes) is not the integrity's length \(length)")
        }
        if let problem = Self.problem(with: keptRanges, in: totalBytes) { return (.keptRanges, problem) }
        if let validator, !validator.isWellFormed {
            return (.validator, "\(validator) is neither a strong entity-tag nor an HTTP-date")
        }
        return nil
    }

    /// Why `ranges` cannot be the kept ranges of a file of `total` bytes; `nil` if they can.
    private static func problem(with ranges: [Range<Int64>], in total: Int64?) -> String? {
        guard let total else {
            return ranges.isEmpty ? nil : "there are kept ranges but no totalBytes"
        }
        var end: Int64 = -1
        for range in ranges {
            if range.isEmpty || range.lowerBound < 0 || range.upperBound > total || range.lowerBound <= end {
                return "\(range) is not a non-empty range of 0..<\(total) after the ones before it"
            }
            end = range.upperBound
        }
        return nil
    }

    /// The same resume data for another destination: the partial file is looked for next to `destination`, under the
    /// name the library gives it there (`.<name>.<UUID>.partial`, the same UUID), as
    /// ``DownloadResumeData/relocated(to:)`` does.
    ///
    /// ```swift
    /// session.resumeSegmentedDownload(try saved.relocated(to: destination))
    /// ```
    ///
    /// - Throws: ``DownloadError/invalidResumeData(field:reason:)`` with field `destination` if `destination`
    ///   is not an absolute file path without `..`.
    public func relocated(to destination: URL) throws -> SegmentedDownloadResumeData {
        let file = try file.relocated(to: destination)
        return try SegmentedDownloadResumeData(
            mirrors: mirrors,
            destination: file.destination,
            partialFile: file.partialFile,
            totalBytes: totalBytes,
            validator: validator,
            keptRanges: keptRanges,
            integrity: integrity
        )
    }

    /// Removes the partial file: for a paused download you will not resume.
    ///
    /// ```swift
    /// saved?.discard()
    /// ```
    ///
    /// It removes only the hidden `.<name>.<UUID>.partial` file next to the destination that the library names, and
    /// never a directory. While a download in this process writes the file — a resume of this data still running, or
    /// the download a checkpoint was taken from — it is left to that download.
    public func discard() {
        file.discard()
    }
}
